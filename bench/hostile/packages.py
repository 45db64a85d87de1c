"""Hostile package files for ``synth verify`` and ``synth play``."""

from __future__ import annotations

import json
from pathlib import Path

from bench.hostile_inputs import Case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-three-items.json"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _write(workdir: Path, name: str, text: str) -> Path:
    path = workdir / name
    path.write_text(text, encoding="utf-8")
    return path


def _regex_bomb_check(workdir: Path) -> list[str]:
    data = json.loads(EXAMPLE.read_text())
    data["checks"][0]["weight"] = round(data["checks"][0]["weight"] - 0.1, 6)
    data["checks"].append({"id": "bomb", "kind": "answer_matches", "weight": 0.1, "pattern": "(a+)+$"})
    data["reference"][-1]["answer"] = "a" * 40 + "!"
    return ["verify", str(_write(workdir, "bomb.json", json.dumps(data)))]


def _title_bomb(workdir: Path) -> list[str]:
    data = json.loads(EXAMPLE.read_text())
    data["checks"][0]["where"] = {"title": {"$regex": r"^(\w+\s?)*$"}}
    data["reference"][0]["args"]["title"] = "Book the venue " + "aaaaaaaaaa " * 40 + "!"
    return ["verify", str(_write(workdir, "title.json", json.dumps(data)))]


def _backreference(workdir: Path) -> list[str]:
    data = json.loads(EXAMPLE.read_text())
    data["checks"][0]["where"] = {"title": {"$regex": r"(venue)\1"}}
    return ["verify", str(_write(workdir, "backref.json", json.dumps(data)))]


def _huge(workdir: Path) -> Path:
    data = json.loads(EXAMPLE.read_text())
    data["request"]["text"] += " " + "Book the venue on 2026-12-10 at 10:00. " * 26_000
    return _write(workdir, "huge.json", json.dumps(data))


def _huge_request(workdir: Path) -> list[str]:
    return ["verify", str(_huge(workdir))]


def _huge_request_play(workdir: Path) -> list[str]:
    return ["play", str(_huge(workdir))]


def _agent_answer_bomb(workdir: Path) -> list[str]:
    """An RL agent answers with text built to make a backtracking engine hang on the package's
    pattern; scoring must finish and print the score."""
    data = json.loads(EXAMPLE.read_text())
    data["checks"][0]["weight"] = round(data["checks"][0]["weight"] - 0.1, 6)
    data["checks"].append({"id": "bomb", "kind": "answer_matches", "weight": 0.1, "pattern": "(a+)+$"})
    package = _write(workdir, "bomb.json", json.dumps(data))
    script = _write(workdir, "agent.py", f"""
import json
from pipeline.core.package import load_package
from pipeline.env.task_env import TaskEnv
env = TaskEnv(load_package(open({str(package)!r}).read()))
env.reset()
end = env.step({{"type": "answer", "text": "a" * 200000 + "!"}})
print("score", end.reward)
""")
    return ["python", str(script)]


CASES = [
    Case("verify an empty folder", lambda w: ["verify", str(w)]),
    Case("verify JSON nested 5,000 deep", lambda w: ["verify", str(_write(w, "deep.json", _nested(5000)))],
         says="schema_invalid: JSON nested deeper than 64 levels"),
    Case("play JSON nested 5,000 deep", lambda w: ["play", str(_write(w, "deep.json", _nested(5000)))],
         expect_code=2),
    Case("verify a catastrophic regex in a check", _regex_bomb_check, says="reference_not_full_score"),
    Case("verify a catastrophic regex against a long title", _title_bomb, says="reference_not_full_score"),
    Case("verify a back-reference RE2 cannot run", _backreference, says="RE2 cannot run"),
    Case("verify a 1 MB request", _huge_request, says="at most 20000 characters"),
    Case("play a 1 MB request", _huge_request_play, expect_code=2),
    Case("score an agent answer built to hang a regex", _agent_answer_bomb, expect_code=0, says="score 0.0"),
]
