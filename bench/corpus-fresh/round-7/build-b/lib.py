"""Helpers: build packages from compact specs, play reference and alternative agents."""
import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent          # bench/corpus-fresh/round-7
ROOT = OUT.parents[2]                                  # the repository
sys.path.insert(0, str(ROOT))
from pipeline import Answer, Ask, TaskEnv, ToolCall, load_package  # noqa: E402


def _services(*extra):
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", "services", "--json", *extra], cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)

SVC = {"default": _services(), "claw": _services("--profile", "claw")}
OUT.mkdir(parents=True, exist_ok=True)

def tool(profile, name, endpoint=None, description=None):
    for s in SVC[profile]:
        for o in s["operations"]:
            if o["tool"] == name:
                return {"name": name, "service": s["name"], "endpoint": endpoint or o["endpoint"],
                        "description": description or o["description"], "parameters": o["parameters"]}
    raise KeyError(name)

PKGS = {}
ALTS = {}

def pkg(fname, *, capability, workflow, difficulty, services, request, initial_state, tools, checks,
        reference, safety=(), faults=(), user=None, profile="default", language="en", now=None, tool_over=None, alts=None):
    tool_over = tool_over or {}
    d = {"schema_version": 1, "id": "", "capability": capability, "workflow": workflow, "difficulty": difficulty,
         "services": services}
    if profile != "default":
        d["service_profile"] = profile
    d["request"] = {"text": request, "language": language}
    if user:
        d["user"] = user
    if now:
        d["now"] = now
    d["initial_state"] = initial_state
    d["tools"] = [tool(profile, t, **tool_over.get(t, {})) for t in tools]
    d["checks"] = checks
    d["safety"] = list(safety)
    d["faults"] = list(faults)
    d["reference"] = reference
    d["provenance"] = {"generator": "hand", "template": workflow, "seed": int(fname[1:3]), "attempt": 1, "parent": None}
    p = load_package(json.dumps(d))
    d["id"] = p.compute_id()
    PKGS[fname] = d
    ALTS[fname] = alts or {}

def run_alt(p, actions):
    env = TaskEnv(p, max_steps=80)
    env.reset()
    for a in actions:
        if a[0] == "call":
            r = env.step(ToolCall(name=a[1], arguments=a[2]))
        elif a[0] == "ask":
            r = env.step(Ask(text=a[1]))
        else:
            r = env.step(Answer(text=a[1]))
        if r.done:
            break
    rep = env.score()
    return rep

def main(only=None):
    from pipeline.env import play_reference
    for fname, d in PKGS.items():
        if only and not any(o in fname for o in only):
            continue
        (OUT / fname).write_text(json.dumps(d, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        p = load_package((OUT / fname).read_text())
        env = play_reference(p)
        rep = env.score()
        print(f"{fname}: ref {rep.score:.3f}")
        if rep.score < 0.999:
            for c in rep.checks:
                if not c.passed:
                    print("   FAIL", c.id, c.detail)
            for c in rep.safety:
                if not c.passed:
                    print("   SAFETY", c.id, c.detail)
        for name, acts in ALTS[fname].items():
            r = run_alt(p, acts)
            failed = [c.id for c in r.checks if not c.passed] + [("SAFETY:" + c.id) for c in r.safety if not c.passed]
            print(f"    {name}: {r.score:.3f}  failed={failed}")
