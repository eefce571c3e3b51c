"""`lgkit reproduce`: scaled reruns of the paper's experiments, one module per experiment."""
