"""What the reader costs beside generation: prompt characters per package, as a share of a
generation attempt's.

    python bench/reader_cost.py [--per-capability 100] [--defect-rate 0.5] [--seed 7]

Generates the offline mix (``--per-capability`` packages of each of the 7 capabilities, a share
``--defect-rate`` of them given a known defect, as ``synth run --defect-rate`` does) and verifies
each with a scripted reader that answers ``agrees`` and measures every prompt the model reader
would send for it: one ``prompts/reader.j2`` per claim, and, for a package still accepted, the one
``prompts/propose.j2``. A generation attempt's prompt is measured as ``bench/prompt_size.py`` does
(system and user messages plus the JSON Schema of the structured output) for the same template.
Printed per capability and for the mix: claims per package, reader characters per package
(claims only, and with the proposal), and each as a ratio of the generation attempt's characters.
Characters stand in for tokens (both prompts are English text and JSON in the same proportions).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

from openai.lib._pydantic import to_strict_json_schema

from pipeline.core.outcomes import Claim, Reading
from pipeline.generation.base import Attempt
from pipeline.generation.defects import inject_defect
from pipeline.generation.llm import TaskPackageOutput
from pipeline.generation.model_reader import reader_messages
from pipeline.generation.offline import generate_package, pick_template
from pipeline.generation.prompting import messages_for, render
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.proposals import proposal_context, reference_run
from pipeline.verify.readers import ScriptedReader
from pipeline.verify.verifier import verify_package


class MeasuringReader(ScriptedReader):
    """Agrees with every claim, counting the characters the model reader's prompt would hold."""

    def __init__(self) -> None:
        super().__init__(default="agrees")
        self.chars = 0

    def confirm(self, claim: Claim, request: str) -> Reading:
        self.chars += sum(len(m["content"]) for m in reader_messages(claim, request))
        return super().confirm(claim, request)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-capability", type=int, default=100)
    parser.add_argument("--defect-rate", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    schema = len(json.dumps(to_strict_json_schema(TaskPackageOutput)))
    capabilities = taxonomy()
    rows: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # packages, claims, confirm, propose, generation
    generation_chars: dict[tuple[str, str], int] = {}
    for cap in capabilities:
        for slot in range(args.per_capability):
            template = pick_template(cap, slot)
            package = generate_package(cap, template, args.seed, slot)
            rng = random.Random(f"{args.seed}:{cap}:{slot}")
            if rng.random() < args.defect_rate:
                injected = inject_defect(package, rng)
                package = injected[0] if injected is not None else package
            reader = MeasuringReader()
            verdict = verify_package(package, reader=reader)
            propose = 0
            if verdict.accepted and verdict.score == 1.0:
                propose = len(render("propose.j2", **proposal_context(reference_run(package))))
            if (cap, template) not in generation_chars:
                attempt = Attempt(capability=cap, template=template, seed=args.seed, slot=slot)
                generation_chars[(cap, template)] = sum(len(str(m["content"])) for m in
                                                        messages_for(attempt, capabilities)) + schema
            for key in (cap, "all"):
                row = rows[key]
                row[0] += 1
                row[1] += len(reader.asked)
                row[2] += reader.chars
                row[3] += reader.chars + propose
                row[4] += generation_chars[(cap, template)]
    print(f"{'capability':24}{'packages':>9}{'claims/pkg':>11}{'reader chars/pkg':>18}{'+ proposal':>12}"
          f"{'generation/pkg':>16}{'ratio':>8}{'ratio + proposal':>18}")
    for key, (n, claims, confirm, both, gen) in sorted(rows.items(), key=lambda kv: kv[0] == "all"):
        print(f"{key:24}{n:>9.0f}{claims / n:>11.2f}{confirm / n:>18,.0f}{both / n:>12,.0f}{gen / n:>16,.0f}"
              f"{confirm / gen:>8.3f}{both / gen:>18.3f}")


if __name__ == "__main__":
    main()
