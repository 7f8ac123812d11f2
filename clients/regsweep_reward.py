"""regsweep_reward.py - a client of `regsweep reward serve` for trainers that call Python
(standard library only). docs/reward.md.

    REGSWEEP_REWARD_URL=http://127.0.0.1:8008   (the default)

verl:  custom_reward_function.path=clients/regsweep_reward.py custom_reward_function.name=compute_score
       (the dataset's reward_model.ground_truth is the regsweep instance id; extra_info may carry
       {"instance": id} instead). compute_score_batch is the same for verl's batch reward manager.
TRL:   GRPOTrainer(reward_funcs=[regsweep_reward.trl_reward], ...) with an "instance" column in the
       dataset (passed to reward functions as a keyword), or prompts that are regsweep's own texts.
OpenRLHF needs no Python: --remote_rm_url http://127.0.0.1:8008/get_reward (labels = instance ids).
"""
import json
import os
import urllib.error
import urllib.request

URL = os.environ.get("REGSWEEP_REWARD_URL", "http://127.0.0.1:8008")


def _text(x):
    """A completion or prompt as text: a string, or a chat message list (the last message's content)."""
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        return x.get("content", "")
    if isinstance(x, (list, tuple)) and x:
        return _text(x[-1])
    return ""


def _prompt_text(p):
    """For a conversation, the last user message (regsweep hashes the user message it generates)."""
    if isinstance(p, (list, tuple)):
        users = [m for m in p if isinstance(m, dict) and m.get("role") == "user"]
        return _text(users[-1]) if users else _text(p)
    return _text(p)


def score(items, url=None, timeout=600):
    """items: [{"instance" or "prompt": ..., "completion": ...}] -> the server's answer
    ({"rewards": [...], "results": [...], "meta": {...}}). Raises on a request error."""
    body = json.dumps({"items": items}).encode()
    req = urllib.request.Request((url or URL).rstrip("/") + "/reward", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError("regsweep reward: HTTP %d: %s" % (e.code, e.read().decode(errors="replace")))


def _item(instance, prompt, completion):
    it = {"completion": _text(completion)}
    if instance:
        it["instance"] = instance
    else:
        it["prompt"] = _prompt_text(prompt)
    return it


def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, **kwargs):
    """verl's custom reward function: a dict with "score" (verl reads it) and the verdict."""
    inst = (extra_info or {}).get("instance") if isinstance(extra_info, dict) else None
    res = score([_item(inst or ground_truth, None, solution_str)])["results"][0]
    return {"score": float(res["reward"]), "verdict": res.get("verdict") or "error"}


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    """verl's batch reward manager: one request for the whole batch."""
    items = []
    for sol, gt, ex in zip(solution_strs, ground_truths, extra_infos):
        inst = ex.get("instance") if isinstance(ex, dict) else None
        items.append(_item(inst or gt, None, sol))
    return [{"score": float(r["reward"]), "verdict": r.get("verdict") or "error"} for r in score(items)["results"]]


def trl_reward(prompts=None, completions=None, instance=None, **kwargs):
    """TRL's GRPO reward function: list[float], one per completion. `instance` is the dataset's
    column of that name (TRL passes dataset columns as keywords); without it the prompts are
    looked up by their text."""
    n = len(completions)
    insts = instance if instance is not None else [None] * n
    prs = prompts if prompts is not None else [None] * n
    items = [_item(insts[i], prs[i], completions[i]) for i in range(n)]
    return [float(x) for x in score(items)["rewards"]]


if __name__ == "__main__":  # python3 regsweep_reward.py IN.jsonl: one answer line per item
    import sys
    items = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    for r in score(items)["results"]:
        print(json.dumps(r))
