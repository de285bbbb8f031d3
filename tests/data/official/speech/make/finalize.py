"""Adds the corpus header (script, commit, how it was run, styles) to run_asr.py / run_st.py output.

usage: python finalize.py RAW.jsonl OUT.jsonl qwen|kimi|st
"""
import json, sys
from collections import Counter
src, dst, which = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [json.loads(x) for x in open(src, encoding="utf-8")]
H = {
 "qwen": {"scorer": "qwen2_audio_wer", "preset": "qwen2_audio_asr", "metric": "wer",
          "script": {"repo": "QwenLM/Qwen2-Audio", "path": "eval_audio/evaluate_asr.py",
                     "commit": "595360e82b5839c1507492ec83cae5bda6d5c7d4",
                     "with": "eval_audio/evaluate_tokenizer.py, eval_audio/cn_tn.py, eval_audio/whisper_normalizer/ of the same commit"},
          "ran": ("tests/data/official/speech/make/run_asr.py qwen <checkout>/eval_audio RAW.jsonl, in a temporary folder outside the repository, with "
                  "sacrebleu==1.5.1 (EVALUATION.md's pin), editdistance==0.8.1, zhconv==1.4.3, regex, more-itertools; "
                  "evaluate_asr.py imported unmodified (import-time stand-ins for torch, transformers, requests and tqdm, "
                  "which its remove_sp and compute_wer never call) and, per source, the evaluation block of its __main__: "
                  "gt = remove_sp(gt, lan), response = remove_sp(response, lan), wer = compute_wer(refs, hyps, lan) with "
                  "lan from ds_collections (librispeech en, aishell2 zh, cv15_yue yue, cv15_fr fr); the units of a one-pair "
                  "source are those compute_wer prints for i == 0; 'stops' names the exception it stopped with")},
 "st": {"scorer": "qwen2_audio_bleu", "preset": "qwen2_audio_st", "metric": "bleu", "file": "covost2",
        "script": {"repo": "QwenLM/Qwen2-Audio", "path": "eval_audio/evaluate_st.py",
                   "commit": "595360e82b5839c1507492ec83cae5bda6d5c7d4"},
        "ran": ("tests/data/official/speech/make/run_st.py <checkout>/eval_audio/evaluate_st.py RAW.jsonl, in a temporary folder outside the repository, with sacrebleu==1.5.1 (EVALUATION.md's pin), "
                "mecab-python3==1.0.12, ipadic==1.0.0: the scoring block of evaluate_st.py's __main__ (from "
                "`results_dict = {}` to its per-source print) read from the file and executed unmodified on the "
                "records as `results`; each corpus_bleu(...).score recorded at full precision (the script prints 4 "
                "decimals); the tokenizer is the script's: source.split('_')[-2] -> ja-mecab | zh | 13a")},
 "kimi": {"scorer": "kimi_audio_wer", "preset": "qwen2_audio_asr", "metric": "wer",
          "script": {"repo": "MoonshotAI/Kimi-Audio-Evalkit", "path": "almeval/metrics/wer.py",
                     "commit": "4080c492effcbb38d18e9d8893a9d61885f19d9b",
                     "with": "almeval/metrics/cn_tn.py, almeval/metrics/whisper_normalizer/ and ASRDataset.evaluate_qwen2 in almeval/datasets/ds_asr.py of the same commit"},
          "ran": ("tests/data/official/speech/make/run_asr.py kimi <folder holding almeval/metrics/ as checked out> RAW.jsonl, in a temporary folder outside the repository, with "
                  "sacrebleu==1.5.1, editdistance==0.8.1, zhconv==1.4.3, regex, more-itertools; almeval.metrics.wer imported "
                  "unmodified and, per source (its 'subset'), ASRDataset.evaluate_qwen2's steps: predictions whose str is "
                  "'null' dropped, remove_sp on both sides, compute_wer(gt, pred, lang, return_details=True)")},
}[which]
styles = Counter(l["style"] for l in lines)
H.update({"seed": 29, "n_cases": len(lines), "n_sources": len({l["group"] for l in lines}),
          "verdicts": ("per source: the script's corpus " + H["metric"].upper()
                       + (", and for a one-pair source the units it compared" if H["metric"] == "wer" else "")
                       + "; 'stops': the exception the script stopped with"),
          "styles": dict(sorted(styles.items()))})
with open(dst, "w", encoding="utf-8") as f:
    f.write(json.dumps({"corpus": H}, ensure_ascii=False) + "\n")
    for l in lines:
        f.write(json.dumps(l, ensure_ascii=False) + "\n")
print(len(lines), len(styles))
