"""Large-scale deployment simulation: CorrOpt vs CorrOpt + LinkGuardian (paper §4.7, Fig. 13-14)."""
