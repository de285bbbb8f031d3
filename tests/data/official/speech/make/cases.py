"""Reference/hypothesis pairs in many styles for the ASR conformance corpora (seed 29)."""
import random
import re

EN = [
    "HE HOPED THERE WOULD BE STEW FOR DINNER TURNIPS AND CARROTS AND BRUISED POTATOES",
    "STUFF IT INTO YOU HIS BELLY COUNSELLED HIM",
    "MISTER QUILTER IS THE APOSTLE OF THE MIDDLE CLASSES AND WE ARE GLAD TO WELCOME HIS GOSPEL",
    "THERE'S IRON THEY SAY IN ALL OUR BLOOD AND A GRAIN OR TWO PERHAPS IS GOOD",
    "I DON'T KNOW WHAT YOU'RE TALKING ABOUT",
    "The colour of the sky changed at 5 o'clock.",
    "Mr. Smith paid $20 for two tickets, didn't he?",
    "She was born in 1987 and moved to St. Louis in the 1990s.",
    "\"Hello,\" she said; \"it's nearly half past nine.\"",
    "The well-known author wrote twenty-one novels.",
    "Dr. Jones' lab analysed 3.5 percent of the samples.",
    "Can you believe it? We won!",
]
ZH = [
    "而对楼市成交抑制作用最大的限购",
    "甚至出现交易几乎停滞的情况",
    "一二线城市虽然也处于调整中",
    "但因为聚集了过多公共资源",
    "这是2018年3月5日发布的报告。",
    "价格上涨了12.5%，达到3.5元。",
    "他的电话是13812345678，请记下来。",
    "全国有1/3的人口参与了这项调查！",
    "我们买了3个苹果和20斤大米",
    "苹果公司发布了新的iPhone手机",
    "“你好，”他说：“今天天气不错。”",
    "编号为20180305的文件已经归档",
]
YUE = [
    "佢哋今日去咗海邊玩",
    "我唔係好明白你講乜嘢",
    "呢間餐廳嘅點心好好食。",
    "香港嘅天氣越嚟越熱，記得飲多啲水！",
    "你食咗飯未呀？",
    "我哋聽日九點鐘喺地鐵站等。",
    "佢買咗三本書同埋兩枝筆",
    "呢個問題好複雜，要慢慢諗。",
]
FR = [
    "Il fait très beau aujourd'hui.",
    "L'homme est allé à la boulangerie acheter du pain.",
    "Elle a vingt-deux ans et habite à Paris.",
    "« Bonjour », dit-il, « comment ça va ? »",
    "Nous étions 3 000 personnes sur la place.",
    "Qu'est-ce que tu veux faire ce week-end ?",
    "Les élèves ont étudié l'histoire de France.",
    "C'était le 14 juillet 1789.",
]
LANGS = {"en": EN, "zh": ZH, "yue": YUE, "fr": FR}

FULLWIDTH = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}
EN_DIGITS = {"two": "2", "twenty": "20", "five": "5", "nine": "9", "one": "1", "three": "3"}
ZH_TRAD = str.maketrans("对楼价这发报告们买苹果电话请记国调查说气编号档归为经虽处调整聚过资源还让见时间东车门书长",
                        "對樓價這發報告們買蘋果電話請記國調查說氣編號檔歸為經雖處調整聚過資源還讓見時間東車門書長")
YUE_SIMP = str.maketrans("佢哋係講嘢間餐廳嘅點龍記飲啲鐘喺地鐵站買書兩筆個問題複雜諗聽", "佢哋系讲嘢间餐厅嘅点龙记饮啲钟喺地铁站买书两笔个问题复杂谂听")
FILLERS = {"en": "uh um", "zh": "嗯 啊", "yue": "呃", "fr": "euh"}


def words(s):
    return s.split()


def style_fns(lang, rng):
    sep = "" if lang in ("zh", "yue") else " "

    def toks(s):
        return list(s) if lang in ("zh", "yue") else s.split()

    def join(t):
        return sep.join(t)

    def drop(s):
        t = toks(s)
        if len(t) > 1:
            del t[rng.randrange(len(t))]
        return join(t)

    def insert(s):
        t = toks(s)
        t.insert(rng.randrange(len(t) + 1), {"en": "really", "zh": "就", "yue": "都", "fr": "vraiment"}[lang])
        return join(t)

    def sub(s):
        t = toks(s)
        i = rng.randrange(len(t))
        t[i] = {"en": "something", "zh": "是", "yue": "嘢", "fr": "chose"}[lang]
        return join(t)

    def swap(s):
        t = toks(s)
        if len(t) > 2:
            i = rng.randrange(len(t) - 1)
            t[i], t[i + 1] = t[i + 1], t[i]
        return join(t)

    def digits(s):
        if lang == "en":
            for w, d in EN_DIGITS.items():
                s = re.sub(rf"\b{w}\b", d, s, flags=re.I)
            return s
        if lang in ("zh", "yue"):
            return s.replace("三", "3").replace("两", "2").replace("二", "2").replace("九", "9").replace("一", "1")
        return s.replace("vingt-deux", "22").replace("trois", "3")

    def spelled(s):
        if lang == "en":
            return s.replace("$20", "twenty dollars").replace("1987", "nineteen eighty seven").replace("5", "five")
        if lang in ("zh", "yue"):
            return s.replace("2018年", "二零一八年").replace("12.5%", "百分之十二点五").replace("3", "三").replace("20", "二十")
        return s.replace("3 000", "trois mille").replace("14", "quatorze").replace("1789", "mille sept cent quatre-vingt-neuf")

    def contraction(s):
        if lang == "en":
            s2 = re.sub(r"\b(\w+)'s\b", r"\1 is", s)
            s2 = s2.replace("DON'T", "DO NOT").replace("didn't", "did not").replace("YOU'RE", "YOU ARE").replace("it's", "it is")
            return s2.replace("do not", "don't") if s2 == s else s2
        if lang == "fr":
            return s.replace("L'homme", "Le homme").replace("aujourd'hui", "aujourd hui").replace("Qu'est-ce", "Qu est ce")
        return s

    def spelling(s):
        if lang == "en":
            return (s.replace("colour", "color").replace("COUNSELLED", "COUNSELED").replace("analysed", "analyzed")
                    .replace("MISTER", "MR.").replace("Mr.", "Mister").replace("Dr.", "Doctor").replace("St.", "Saint"))
        if lang == "zh":
            return s.translate(ZH_TRAD)
        if lang == "yue":
            return s.translate(YUE_SIMP)
        return s.replace("é", "e").replace("è", "e").replace("à", "a").replace("ç", "c").replace("ê", "e")

    return {
        "exact": lambda s: s,
        "lower": lambda s: s.lower(),
        "upper": lambda s: s.upper(),
        "title": lambda s: s.title(),
        "no_punct": lambda s: re.sub(r"[^\w\s']", "", s),
        "period": lambda s: s.rstrip() + ("。" if lang in ("zh", "yue") else "."),
        "space_before_punct": lambda s: re.sub(r"([,.!?;:，。！？])", r" \1", s) + " !",
        "cn_punct": lambda s: s.replace(",", "，").replace(".", "。").replace("?", "？").replace("!", "！") + "。",
        "ascii_punct": lambda s: s.replace("，", ",").replace("。", ".").replace("！", "!").replace("？", "?").replace("“", '"').replace("”", '"'),
        "curly_quotes": lambda s: "“" + s.replace("'", "’") + "”",
        "guillemets": lambda s: "« " + s + " »",
        "prefix": lambda s: {"en": "The transcription is: ", "zh": "转写结果：", "yue": "內容係：", "fr": "Transcription : "}[lang] + s,
        "lang_tag": lambda s: f"<|{lang}|>" + s + "<|endoftext|>",
        "drop_word": drop,
        "insert_word": insert,
        "substitute": sub,
        "swap": swap,
        "empty": lambda s: "",
        "whitespace": lambda s: "  \n ",
        "newlines": lambda s: "\n".join(s.split(" ", 2)) if " " in s else s[: len(s) // 2] + "\n" + s[len(s) // 2:],
        "double_spaces": lambda s: "  " + re.sub(" ", "   ", s) + "  ",
        "digits": digits,
        "spelled_numbers": spelled,
        "contraction": contraction,
        "spelling_variant": spelling,
        "fillers": lambda s: FILLERS[lang] + (" " if sep else "") + s,
        "fullwidth": lambda s: s.translate(str.maketrans(FULLWIDTH)),
        "hyphens": lambda s: s.replace(" ", "-", 2) if " " in s else s[:2] + "-" + s[2:],
        "ellipsis": lambda s: s.rstrip(".。") + "…",
        "repeated": lambda s: s + " " + s,
        "markdown": lambda s: "**" + s + "**",
        "emoji": lambda s: s + " 😊",
        "traditional": lambda s: s.translate(ZH_TRAD) if lang == "zh" else s,
        "simplified": lambda s: s.translate(YUE_SIMP),
        "truncated": lambda s: s[: max(1, len(s) // 2)],
        "english_words": lambda s: s + (" OK" if lang in ("zh", "yue") else " OK?"),
        "apostrophes": lambda s: s.replace("'", "`"),
        "symbols": lambda s: s + " #1 & 100% @home",
    }


def cases(seed=29):
    """[(case id, language, style, reference, hypothesis)]"""
    rng = random.Random(seed)
    out = []
    n = 0
    for lang, refs in LANGS.items():
        fns = style_fns(lang, rng)
        for style, fn in fns.items():
            k = 3 if lang in ("en", "zh") else 2
            for ref in rng.sample(refs, k):
                out.append((f"{lang}-{n:04d}", lang, style, ref, fn(ref)))
                n += 1
    return out


# references that normalise to nothing, or lose their first word: the scripts' edge cases
EDGE = [("en", "Um.", "um"), ("en", "...", "hello"), ("zh", "，。", "好"), ("fr", "« »", "oui"), ("yue", "！？", "係")]

if __name__ == "__main__":
    c = cases()
    print(len(c), len({x[2] for x in c}))
