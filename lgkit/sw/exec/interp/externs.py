"""Stateful v1model externs: register, counter and meter arrays (and the direct meter state)."""

from __future__ import annotations

GREEN, YELLOW, RED = 0, 1, 2


class RegisterArray:
    """register<bit<W>>(size). Values are stored unsigned; out-of-range access is an error log
    entry (read leaves the destination unchanged, write does nothing), as in BMv2. The
    generated code indexes `values` directly in range (the list object never changes)."""

    def __init__(self, name: str, size: int, width: int, signed: bool, logs: list[str]):
        self.name = name
        self.size = size
        self.width = width
        self.signed = signed
        self.values = [0] * size
        self._mask = (1 << width) - 1
        self._logs = logs

    def read(self, index: int) -> int:
        return self.values[index]

    def write(self, index: int, value: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(f"{self.name}: index {index} out of range")
        self.values[index] = value & self._mask

    def reset(self) -> None:
        self.values[:] = [0] * self.size  # in place: generated code holds the list

    def p4_read(self, index: int, current: int) -> int:
        """The value a P4 `read` stores (signed for int<W>), or `current` when out of range."""
        if index >= self.size:
            self._logs.append(f"error: register {self.name}: read index {index} out of range")
            return current
        value = self.values[index]
        if self.signed and value >> (self.width - 1):
            value -= 1 << self.width
        return value

    def p4_write(self, index: int, value: int) -> None:
        if index >= self.size:
            self._logs.append(f"error: register {self.name}: write index {index} out of range")
            return
        self.values[index] = value & self._mask


class CounterArray:
    """counter(size, kind); kind is 'packets', 'bytes' or 'packets_and_bytes'. The generated
    code updates `packets` and `bytes` directly in range (the list objects never change)."""

    def __init__(self, name: str, size: int, kind: str, logs: list[str]):
        self.name = name
        self.size = size
        self.kind = kind
        self.packets = [0] * size
        self.bytes = [0] * size
        self._logs = logs

    def read(self, index: int) -> tuple[int, int]:
        return (self.packets[index], self.bytes[index])

    def write(self, index: int, packets: int, nbytes: int) -> None:
        self.packets[index] = packets
        self.bytes[index] = nbytes

    def reset(self) -> None:
        self.packets[:] = [0] * self.size  # in place: generated code holds the lists
        self.bytes[:] = [0] * self.size

    def count(self, index: int, length: int) -> None:
        if index >= self.size:
            self._logs.append(f"error: counter {self.name}: index {index} out of range")
            return
        self.packets[index] += 1
        self.bytes[index] += length


class TrTcm:
    """RFC 2698 two-rate three-colour marker, colour-blind. Rates in units per second, bursts
    in units (units are packets or bytes). State: [tc, tp, last_us]."""

    @staticmethod
    def new_state(config: tuple[tuple[int, int], tuple[int, int]]) -> list[float]:
        (_, cburst), (_, pburst) = config
        return [float(cburst), float(pburst), -1.0]

    @staticmethod
    def mark(
        config: tuple[tuple[int, int], tuple[int, int]], state: list[float], units: int, now: int
    ) -> int:
        (cir, cburst), (pir, pburst) = config
        tc, tp, last = state
        if last >= 0 and now > last:
            elapsed = (now - last) / 1e6
            tc = min(float(cburst), tc + cir * elapsed)
            tp = min(float(pburst), tp + pir * elapsed)
        state[2] = float(now) if now > last else last
        if tp < units:
            state[0], state[1] = tc, tp
            return RED
        if tc < units:
            state[0], state[1] = tc, tp - units
            return YELLOW
        state[0], state[1] = tc - units, tp - units
        return GREEN


class MeterArray:
    """meter(size, kind); kind is 'packets' or 'bytes'. An unconfigured meter returns GREEN."""

    def __init__(self, name: str, size: int, kind: str, logs: list[str]):
        self.name = name
        self.size = size
        self.kind = kind
        self.configs: list[tuple[tuple[int, int], tuple[int, int]] | None] = [None] * size
        self._states: list[list[float] | None] = [None] * size
        self._logs = logs

    def set_rates(self, index: int, committed: tuple[int, int], peak: tuple[int, int]) -> None:
        """Configure cell `index`: (cir, cburst), (pir, pburst); rates in units per second."""
        if not 0 <= index < self.size:
            raise IndexError(f"{self.name}: index {index} out of range")
        self.configs[index] = (committed, peak)
        self._states[index] = TrTcm.new_state((committed, peak))

    def get_rates(self, index: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
        return self.configs[index]

    def reset_rates(self, index: int) -> None:
        self.configs[index] = None
        self._states[index] = None

    def execute(self, index: int, length: int, now_us: int) -> int:
        if index >= self.size:
            self._logs.append(f"error: meter {self.name}: index {index} out of range")
            return GREEN
        config = self.configs[index]
        state = self._states[index]
        if config is None or state is None:
            return GREEN
        return TrTcm.mark(config, state, 1 if self.kind == "packets" else length, now_us)


def direct_meter_execute(entry: object, packets: bool, length: int, now_us: int) -> int:
    """Run an entry's direct meter (on a hit); an unconfigured meter gives GREEN."""
    config = getattr(entry, "meter_config", None)
    if config is None:
        return GREEN
    state = entry.meter_state  # type: ignore[attr-defined]
    if state is None:
        state = entry.meter_state = TrTcm.new_state(config)  # type: ignore[attr-defined]
    return TrTcm.mark(config, state, 1 if packets else length, now_us)
