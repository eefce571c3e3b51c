"""Write the LinkGuardian exercises' programs from one annotated source (exercises/src).

`exercises/src/lglite.p4m` is the complete program with line markers:
`//@since N` .. `//@end` (only in exercises >= N), `//@until N` .. `//@end` (only before N),
`//@todo N hint` .. `//@end` (exercise N's task: a TODO comment in its skeleton, the code in its
solution and in every later exercise). `python -m lgkit.course.generate` rewrites each
exercise's skeleton and solution/; tests/course/test_course_exercises.py checks they are current.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

EXERCISES_DIR = Path(__file__).resolve().parents[2] / "exercises"
SOURCE = EXERCISES_DIR / "src" / "lglite.p4m"
PROGRAM = "lglite.p4"
# exercise number -> folder; exercise 5 (the control plane) runs exercise 4's solution
FOLDERS = {1: "seqno", 2: "txbuffer", 3: "reorder", 4: "dummy", 5: "control"}
MARKER = re.compile(r"^\s*//@(since|until|todo|end)\b\s*(\d+)?\s*(.*)$")
COPIES = 3            # N retransmitted copies in the exercises' runtime config
TIMEOUT_US = 1_000_000  # ackNo timeout (LG mode); BMv2 in Mininet can be slow
DROP_PPM = 50_000     # the link loses 5% of the frames s1 sends to s2 (the corruption emulator)
MAKEFILE = ("BMV2_SWITCH_EXE = simple_switch_grpc\nTOPO = topology.json\n\n"
            "include ../utils/Makefile\n")


def render(lines: list[str], exercise: int, solution: bool) -> list[str]:
    """The program of `exercise` (its skeleton, or its solution)."""
    out: list[str] = []
    stack: list[bool] = []
    pending_todo: str | None = None
    for line in lines:
        match = MARKER.match(line)
        if match:
            kind, number, hint = match.group(1), int(match.group(2) or 0), match.group(3)
            if kind == "end":
                stack.pop()
                continue
            shown = all(stack)
            if kind == "since":
                stack.append(exercise >= number)
            elif kind == "until":
                stack.append(exercise < number)
            else:
                task = exercise == number and not solution
                stack.append(exercise >= number and not task)
                if task and shown:
                    pending_todo = hint
            continue
        if pending_todo is not None:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}/* TODO (exercise {exercise}): {pending_todo}. */\n")
            pending_todo = None
        if all(stack):
            out.append(line)
    if stack:
        raise ValueError(f"{SOURCE}: unclosed marker")
    return out


def outputs() -> dict[Path, str]:
    """Every generated file and its text."""
    lines = SOURCE.read_text().splitlines(keepends=True)
    header = "/* Generated from exercises/src/lglite.p4m by `python -m lgkit.course.generate`. */\n"
    files = {}
    for number, folder in FOLDERS.items():
        program = min(number, 4)
        skeleton = number if number < 5 else 99  # exercise 5 starts from a complete program
        files[EXERCISES_DIR / folder / PROGRAM] = header + "".join(
            render(lines, program if number < 5 else 4, solution=skeleton == 99))
        files[EXERCISES_DIR / folder / "solution" / PROGRAM] = header + "".join(
            render(lines, program, solution=True))
    return files


def topology() -> dict:
    """h1 - s1 ==protected link== s2 - h2; ports: 1 host, 2 link; three priority queues."""
    hosts = {f"h{i}": {"ip": f"10.0.0.{i}/24", "mac": f"08:00:00:00:00:0{i}",
                       "commands": [f"arp -i eth0 -s 10.0.0.{3 - i} 08:00:00:00:00:0{3 - i}"]}
             for i in (1, 2)}
    switches = {s: {"runtime_json": f"{s}-runtime.json", "priority_queues": 3}
                for s in ("s1", "s2")}
    return {"hosts": hosts, "switches": switches,
            "links": [["h1", "s1-p1"], ["h2", "s2-p1"], ["s1-p2", "s2-p2"]]}


def runtime(switch: str, number: int) -> dict:
    """A switch's runtime JSON: clone sessions, the retransmission group and the LG roles
    (exercise 5 leaves the roles to the student's controller)."""
    sender = switch == "s1"
    conf: dict = {"target": "bmv2", "p4info": f"build/{Path(PROGRAM).stem}.p4.p4info.txtpb",
                  "bmv2_json": f"build/{Path(PROGRAM).stem}.json", "table_entries": []}
    if number < 5:
        conf["table_entries"].append({
            "table": "MyIngress.lg_config", "default_action": True,
            "action_name": "MyIngress.configure",
            "action_params": {"sender": int(sender), "receiver": int(not sender),
                              "blocking": int(number >= 3), "retx_group": 1,
                              "timeout_us": TIMEOUT_US}})
    if not sender:
        conf["table_entries"].append({
            "table": "MyIngress.link_corruption", "default_action": True,
            "action_name": "MyIngress.corrupt", "action_params": {"drop_ppm": DROP_PPM}})
    sessions = (100, 102) if sender else (101,)
    conf["clone_session_entries"] = [
        {"clone_session_id": sid, "replicas": [{"egress_port": 2, "instance": 0}]}
        for sid in sessions]
    if sender and number < 5:
        conf["multicast_group_entries"] = [{"multicast_group_id": 1, "replicas": [
            {"egress_port": 2, "instance": i} for i in range(1, COPIES + 1)]}]
    return conf


def layout_files() -> dict[Path, str]:
    """Each exercise's Makefile, topology.json and runtime JSON."""
    files = {}
    for number, folder in FOLDERS.items():
        base = EXERCISES_DIR / folder
        files[base / "Makefile"] = MAKEFILE
        files[base / "topology.json"] = json.dumps(topology(), indent=2) + "\n"
        for switch in ("s1", "s2"):
            files[base / f"{switch}-runtime.json"] = json.dumps(runtime(switch, number),
                                                                indent=2) + "\n"
    return files


def main() -> int:
    for path, text in {**outputs(), **layout_files()}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(EXERCISES_DIR.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
