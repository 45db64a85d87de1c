"""GRPO on synth task packages through their OpenEnv face: TRL's ``GRPOTrainer`` with a rollout
function that plays each episode in ``synth serve --openenv`` and takes the reward from it.

Every dataset row is one package (the ``seed`` a reset takes: the server's shuffle position), so
the ``num_generations`` completions GRPO compares are episodes of the same task. The reward is the
environment's: the package score the verifier's grader gives the episode (``info["passed"]`` is
logged too). The model speaks the text protocol of chat templates with tools: a reply holding
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks calls those tools; a reply
without one asks the user when it ends with a question mark (and the package has a user), and is
the final answer otherwise.

Setup (a GPU for training; the environment needs none):

    pip install 'synth[openenv]' trl vllm datasets transformers

1. The environment, from a catalog (`synth run` fills one):

    synth serve --openenv output/catalog.duckdb --where "capability = 'multi-turn'" --port 8001

2. Training with TRL's vLLM server (two GPUs):

    CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen3-1.7B --port 8000
    CUDA_VISIBLE_DEVICES=1 python examples/grpo_synth.py --env-url http://127.0.0.1:8001 \\
        --vllm-mode server --vllm-server-url http://127.0.0.1:8000

   or with vLLM colocated on one GPU: ``python examples/grpo_synth.py --vllm-mode colocate``.

3. No training, a check of the loop with any OpenAI-compatible server (vLLM's ``vllm serve``,
   llama.cpp, a hosted API; the key from ``OPENAI_API_KEY``):

    python examples/grpo_synth.py --env-url http://127.0.0.1:8001 \\
        --openai-base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-1.7B --episodes 8

The rollout side (``make_rollout_func``, ``play_episode``, ``parse_reply``) imports neither TRL nor
a model: ``tests/interop/test_grpo_example.py`` drives it with a scripted policy.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

from pipeline.core.training_format import SYSTEM_PROMPT, observation_text
from pipeline.interop.openenv import SynthAction, SynthEnv
from pipeline.runs.rollout_episode import is_question

Messages = list[dict[str, Any]]
Generate = Callable[[Any, Messages, list[dict[str, Any]]], dict[str, Any]]
"""``generate(trainer, messages, tools)`` → ``{"text", "prompt_ids", "completion_ids", "logprobs"}``:
one model reply to the conversation so far (TRL: ``generate_rollout_completions``)."""

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def parse_reply(text: str, has_user: bool) -> list[SynthAction]:
    """The actions a model reply takes: its ``<tool_call>`` blocks in order (a block that is not a
    JSON object with a ``name`` calls no tool the package has, so the agent sees a 404 and can
    recover), else a question to the user, else the final answer."""
    calls = TOOL_CALL.findall(text)
    if not calls:
        reply = text.strip()
        return [SynthAction.question(reply) if is_question(reply, has_user) else SynthAction.final(reply)]
    actions = []
    for block in calls:
        try:
            call = json.loads(block)
        except json.JSONDecodeError:
            call = None
        if isinstance(call, dict) and isinstance(call.get("name"), str) and call["name"]:
            arguments = call.get("arguments", {})
            actions.append(SynthAction.call(call["name"], arguments if isinstance(arguments, dict | str) else {}))
        else:
            actions.append(SynthAction.call("unparsed_tool_call", {"text": block[:200]}))
    return actions


def play_episode(env: Any, trainer: Any, generate: Generate, seed: int, max_turns: int) -> dict[str, Any]:
    """One episode of the package at shuffle position ``seed``: the model replies, each reply's
    actions step the environment, until the episode ends or ``max_turns`` replies are spent.
    ``env`` is a synchronous ``SynthEnv`` (``SynthEnv(...).sync()``)."""
    result = env.reset(seed=seed)
    tools = result.observation.tools or []
    has_user = bool(result.observation.info.get("user"))
    messages: Messages = [{"role": "system", "content": SYSTEM_PROMPT},
                          {"role": "user", "content": result.observation.text}]
    prompt_ids: list[int] = []
    completion_ids: list[int] = []
    logprobs: list[float] = []
    for _turn in range(max_turns):
        reply = generate(trainer, messages, tools)
        if not prompt_ids:
            prompt_ids = list(reply.get("prompt_ids", []))
        completion_ids.extend(reply.get("completion_ids", []))
        logprobs.extend(reply.get("logprobs", []))
        messages.append({"role": "assistant", "content": reply["text"]})
        for action in parse_reply(reply["text"], has_user):
            result = env.step(action)
            observation = result.observation
            if observation.kind == "tool_result":
                messages.append({"role": "tool", "content": observation_text(observation.status, observation.result)})
            elif observation.kind == "user_reply":
                messages.append({"role": "user", "content": observation.text})
            if result.done:
                break
        if result.done:
            break
    if not result.done:  # out of turns: close the episode so the environment grades it
        result = env.step(SynthAction.final(""))
    info = result.observation.info
    return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs,
            "env_reward": float(result.reward or 0.0), "passed": bool(info.get("passed")),
            "package_id": env.state().package_id}


def make_rollout_func(env_url: str, generate: Generate, max_turns: int = 8) -> Callable[[list[str], Any], dict[str, list[Any]]]:
    """TRL's ``rollout_func(prompts, trainer)``: each prompt is a shuffle position (the dataset's
    rows); returns the token ids and log-probabilities TRL trains on, and ``env_reward`` and
    ``passed`` per episode, which TRL hands to the reward functions as keyword arguments."""
    client: list[Any] = []

    def rollout_func(prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
        if not client:
            client.append(SynthEnv(base_url=env_url).sync())
            client[0].connect()
        episodes = [play_episode(client[0], trainer, generate, int(prompt), max_turns) for prompt in prompts]
        return {key: [e[key] for e in episodes] for key in
                ("prompt_ids", "completion_ids", "logprobs", "env_reward", "passed", "package_id")}

    return rollout_func


def reward_from_env(completions: list[Any], **kwargs: Any) -> list[float]:
    """The environment's reward of each episode (the package score)."""
    return [float(r) for r in kwargs.get("env_reward") or [0.0] * len(completions)]


def packages_served(env_url: str) -> int:
    """How many packages the server holds (its state says)."""
    with SynthEnv(base_url=env_url).sync() as env:
        return int(env.state().packages)


# --------------------------------------------------------------------------- running it


def tool_prompt(tools: list[dict[str, Any]]) -> str:
    """The tools and the call format, for a server that is given text only."""
    return (SYSTEM_PROMPT + "\n\nTools (OpenAI function schemas):\n" + json.dumps(tools, ensure_ascii=False)
            + '\n\nTo call a tool reply with <tool_call>{"name": "...", "arguments": {...}}</tool_call>.')


def openai_generate(base_url: str, model: str, temperature: float) -> Generate:
    """A ``generate`` over any OpenAI-compatible chat server (no token ids: for checking, not training)."""
    from openai import OpenAI

    chat = OpenAI(base_url=base_url)

    def generate(trainer: Any, messages: Messages, tools: list[dict[str, Any]]) -> dict[str, Any]:
        sent = [{"role": "system", "content": tool_prompt(tools)}, *messages[1:]]
        sent = [m if m["role"] != "tool" else {"role": "user", "content": "Tool result: " + m["content"]} for m in sent]
        reply = chat.chat.completions.create(model=model, messages=sent, temperature=temperature)  # type: ignore[arg-type]
        return {"text": reply.choices[0].message.content or ""}

    return generate


def trl_generate(tokenizer: Any) -> Generate:
    """A ``generate`` through TRL's vLLM (server or colocated), the chat template rendering the tools."""
    from trl.experimental.openenv import generate_rollout_completions

    def generate(trainer: Any, messages: Messages, tools: list[dict[str, Any]]) -> dict[str, Any]:
        prompt = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
        out = generate_rollout_completions(trainer, [prompt])[0]
        text = out.get("text") or tokenizer.decode(out["completion_ids"], skip_special_tokens=True)
        return {**out, "text": text}

    return generate


def main() -> None:
    parser = argparse.ArgumentParser(description="GRPO over synth packages served by `synth serve --openenv`.")
    parser.add_argument("--env-url", default="http://127.0.0.1:8001", help="the OpenEnv server's base URL")
    parser.add_argument("--model", default="Qwen/Qwen3-1.7B")
    parser.add_argument("--max-turns", type=int, default=8, help="model replies per episode")
    parser.add_argument("--vllm-mode", choices=("server", "colocate"), default="colocate")
    parser.add_argument("--vllm-server-url", default="http://127.0.0.1:8000")
    parser.add_argument("--num-generations", type=int, default=4, help="episodes per package GRPO compares")
    parser.add_argument("--max-completion-length", type=int, default=512)
    parser.add_argument("--learning-rate", type=float, default=1e-6)
    parser.add_argument("--output-dir", default="output/grpo-synth")
    parser.add_argument("--openai-base-url", help="no training: play --episodes with this OpenAI-compatible server")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.7)
    args = parser.parse_args()

    if args.openai_base_url:
        rollout = make_rollout_func(args.env_url, openai_generate(args.openai_base_url, args.model, args.temperature),
                                    args.max_turns)
        out = rollout([str(k) for k in range(args.episodes)], None)
        for package_id, reward, passed in zip(out["package_id"], out["env_reward"], out["passed"], strict=True):
            print(f"{package_id}  reward {reward:.3f}  {'passed' if passed else ''}")
        print(f"mean reward {sum(out['env_reward']) / len(out['env_reward']):.3f} over {args.episodes} episodes")
        return

    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    dataset = Dataset.from_dict({"prompt": [str(k) for k in range(packages_served(args.env_url))]})
    config = GRPOConfig(output_dir=args.output_dir, use_vllm=True, vllm_mode=args.vllm_mode,
                        vllm_server_base_url=args.vllm_server_url if args.vllm_mode == "server" else None,
                        num_generations=args.num_generations, max_completion_length=args.max_completion_length,
                        learning_rate=args.learning_rate, per_device_train_batch_size=args.num_generations,
                        logging_steps=1)
    trainer = GRPOTrainer(model=args.model, processing_class=tokenizer, reward_funcs=[reward_from_env],
                          train_dataset=dataset, args=config,
                          rollout_func=make_rollout_func(args.env_url, trl_generate(tokenizer), args.max_turns))
    trainer.train()


if __name__ == "__main__":
    main()
