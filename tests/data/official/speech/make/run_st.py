"""Runs Qwen2-Audio's eval_audio/evaluate_st.py scoring block, unmodified, on generated translations.

The block (from `results_dict = {}` to the end of its rank-0 branch) is read from the script's file and
executed with `results` set to the generated records; `sacrebleu` there is the real sacrebleu 1.5.1,
seen through a proxy that records each corpus_bleu result (the script prints it to 4 decimals only).
usage: python run_st.py EVALUATE_ST_PY OUT.jsonl    (then finalize.py adds the header)
Needs sacrebleu==1.5.1 (EVALUATION.md's pin), mecab-python3 and ipadic for ja-mecab.
"""
import json
import random
import re
import sys
import textwrap
import unicodedata

import sacrebleu as real_sacrebleu

REFS = {
    "de": ["Er hoffte, dass es zum Abendessen Eintopf geben würde.", "Das ist nicht das, was ich gemeint habe.",
           "Die Straße war nass, weil es die ganze Nacht geregnet hatte.", "Wir treffen uns um 9 Uhr am Bahnhof.",
           "„Hallo“, sagte sie, „wie geht es dir?“", "Der Preis beträgt 3,50 Euro pro Stück."],
    "zh": ["他希望晚餐会有炖菜。", "这不是我的意思。", "因为下了一整夜的雨，街道是湿的。", "我们九点在火车站见面。",
           "“你好，”她说，“你好吗？”", "每件的价格是3.50欧元。"],
    "ja": ["彼は夕食にシチューがあることを望んでいた。", "それは私が言いたかったことではありません。", "一晩中雨が降ったので、道は濡れていた。",
           "私たちは9時に駅で会います。", "「こんにちは」と彼女は言った。", "価格は1個3.50ユーロです。"],
    "en": ["He hoped there would be stew for dinner.", "That is not what I meant.",
           "The street was wet because it had rained all night.", "We meet at 9 o'clock at the station.",
           "\"Hello,\" she said, \"how are you?\"", "The price is 3.50 euros per piece."],
}
FULLWIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)})
TRAD = str.maketrans("这说里们会时间们晚车站见面欧元价格", "這說裡們會時間們晚車站見面歐元價格")


def styles(lang, rng):
    cjk = lang in ("zh", "ja")

    def toks(s):
        return list(s) if cjk else s.split()

    def join(t):
        return ("" if cjk else " ").join(t)

    def drop(s):
        t = toks(s)
        del t[rng.randrange(len(t))]
        return join(t)

    def swap(s):
        t = toks(s)
        i = rng.randrange(len(t) - 1)
        t[i], t[i + 1] = t[i + 1], t[i]
        return join(t)

    return {
        "exact": lambda s: s, "lower": lambda s: s.lower(), "upper": lambda s: s.upper(),
        "no_punct": lambda s: re.sub(r"[^\w\s]", "", s), "trailing_newline": lambda s: s + "\n",
        "leading_spaces": lambda s: "   " + s, "trailing_spaces": lambda s: s + "   ",
        "double_spaces": lambda s: s.replace(" ", "  "), "tabs": lambda s: s.replace(" ", "\t"),
        "inner_newline": lambda s: s[: len(s) // 2] + "\n" + s[len(s) // 2:], "empty": lambda s: "",
        "whitespace_only": lambda s: " \n ", "drop_token": drop, "swap_tokens": swap,
        "half": lambda s: s[: len(s) // 2], "repeated": lambda s: s + " " + s,
        "prefix": lambda s: "Translation: " + s, "quoted": lambda s: "\"" + s + "\"",
        "markdown": lambda s: "**" + s + "**", "fullwidth": lambda s: s.translate(FULLWIDTH),
        "spaced_chars": lambda s: " ".join(s), "traditional": lambda s: s.translate(TRAD),
        "nfd": lambda s: unicodedata.normalize("NFD", s), "ellipsis": lambda s: s.rstrip("。.") + "…",
        "emoji": lambda s: s + " 👍", "digits_spelled": lambda s: s.replace("9", "nine" if lang == "en" else "九"),
        "curly_apostrophe": lambda s: s.replace("'", "’"), "other_language": lambda s: REFS["en"][0],
        "tags": lambda s: "<|" + lang + "|>" + s, "long_repeat": lambda s: (s + " ") * 6,
    }


rng = random.Random(29)
cases = []
n = 0
for lang, refs in REFS.items():
    for style, fn in styles(lang, rng).items():
        for ref in rng.sample(refs, 3):
            src_lang = "en" if lang != "en" else rng.choice(["fr", "zh", "de"])
            cases.append({"case": f"st{n:04d}", "source": f"covost2_{src_lang}_{lang}_st{n:04d}", "style": style,
                          "gt": ref, "output": fn(ref)})
            n += 1
groups = []
for lang in REFS:
    pool = [c for c in cases if c["source"].split("_")[2] == lang]
    for g in range(2):
        for k, c in enumerate(rng.sample(pool, 15)):
            src_lang = "en" if lang != "en" else "fr"
            groups.append(dict(c, case=f"{lang}g{g}-{k:02d}", source=f"covost2_{src_lang}_{lang}_group{g}"))

scores = {}
src = open(sys.argv[1], encoding="utf-8").read()
block = src[src.index("        results_dict = {}"):src.rindex("    torch.distributed.barrier()")]
block = textwrap.dedent(block)
block_globals = {"tqdm": lambda x: x}


def run(records):
    results = [{"gt": r["gt"], "response": r["output"], "source": r["source"], "audio_path": ""} for r in records]
    scores.clear()
    order = list(dict.fromkeys(r["source"] for r in results))
    it = iter(order)

    def tracking_corpus_bleu(hyps, refs, **kw):
        # the block calls corpus_bleu once per source, in the order of first appearance
        res = real_sacrebleu.corpus_bleu(hyps, refs, **kw)
        scores[next(it)] = res.score
        return res

    g = dict(block_globals, results=results, print=lambda *a, **k: None)
    g["sacrebleu"] = type("S", (), {"corpus_bleu": staticmethod(tracking_corpus_bleu)})()
    try:
        exec(block, g)
    except Exception as exc:
        return {"stops": type(exc).__name__}
    return dict(scores)


lines = []
for c in cases:
    res = run([c])
    verdict = {"stops": res["stops"]} if "stops" in res else {"bleu": res[c["source"]]}
    lines.append({"case": c["case"], "group": c["source"], "style": c["style"],
                  "record": {"audio": f"audio/{c['case']}.mp3", "prompt": "<|en|>", "source": c["source"], "gt": c["gt"]},
                  "output": c["output"], "verdict": verdict})
res = run(groups)
for c in groups:
    lines.append({"case": c["case"], "group": c["source"], "style": c["style"],
                  "record": {"audio": f"audio/{c['case']}.mp3", "prompt": "<|en|>", "source": c["source"], "gt": c["gt"]},
                  "output": c["output"], "group_verdict": {"bleu": res[c["source"]]}})
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for l in lines:
        f.write(json.dumps(l, ensure_ascii=False) + "\n")
print(len(lines), sum("stops" in (l.get("verdict") or {}) for l in lines))
