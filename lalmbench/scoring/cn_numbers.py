"""Arabic numbers in Chinese text rewritten as Chinese numerals, the way the speechio Chinese text
normaliser does it (``cn_tn.py``'s ``normalize_nsw``, which Qwen2-Audio's and Kimi-Audio's WER
scripts apply to every zh reference and transcript).

Why it matters: a model writes "2018年" where AISHELL's reference says "二零一八年"; the report's CER
counts them equal only after this rewrite. Written from what the normaliser does (not its code) and
checked against it, run unmodified, by the ASR conformance corpora (tests/data/official/speech/).

The rewrites run in this order on ``"^" + text + "$"``, each over the matches found before it starts,
each match replacing the first occurrence of its text (which need not be where it was found):
dates (``2018年3月5日``: the year read digit by digit), money (``3.5元``, ``5块5``), mobile and fixed
phone numbers (digit by digit), fractions (``1/3`` -> 三分之一), percentages (``50%``), a number before a
measure word (``3个``), runs of 4-32 digits (digit by digit), any other number (as a cardinal); then
letters around 二 get their 2 back (``P2P``).
"""
from __future__ import annotations

import re

_DIGITS = "零一二三四五六七八九"
#: the units up to 万, then the "mid" system's larger units (亿 = 10^8, 兆 = 10^12, ...): (power, char)
_UNITS = [(1, "十"), (2, "百"), (3, "千"), (4, "万")] + [((i + 2) * 4, c) for i, c in enumerate("亿兆京垓秭穰沟涧正载")]

_QUANTIFIER_CHARS = ("匹张座回场尾条个首阙阵网炮顶丘棵只支袭辆挑担颗壳窠曲墙群腔砣客贯扎捆刀令打手罗坡山岭江溪钟队单双对出口头脚"
                     "板跳枝件贴针线管名位身堂课本页家户层丝毫厘分钱两斤铢石钧锱忽寸尺丈里寻常铺程撮勺合升斗盘碗碟叠桶笼盆盒杯斛"
                     "锅簋篮罐瓶壶卮盏箩箱煲啖袋钵年月日季刻时周天秒旬纪岁世更夜春夏秋冬代伏辈丸泡粒幢堆根道面片块")
_QUANTIFIER = f"(?:千克|微克|千米|微米|[{_QUANTIFIER_CHARS}])"
_CURRENCY_UNIT = "(?:(?:亿|千万|百万|万|千|百)|(?:亿|千万|百万|万|千|百|)元|(?:亿|千万|百万|万|千|百|)块|角|毛|分)"

_DATE = re.compile(r"\D+((([089]\d|(19|20)\d{2})年)?(\d{1,2}月(\d{1,2}[日号])?)?)")
_MONEY = re.compile(r"\D+((\d+(\.\d+)?)[多余几]?" + _CURRENCY_UNIT + r"(\d" + _CURRENCY_UNIT + r"?)?)")
_MOBILE = re.compile(r"\D((\+?86 ?)?1([38]\d|5[0-35-9]|7[678]|9[89])\d{8})\D")
_FIXED = re.compile(r"\D((0(10|2[1-3]|[3-9]\d{2})-?)?[1-9]\d{6,7})\D")
_FRACTION = re.compile(r"(\d+/\d+)")
_PERCENT = re.compile(r"(\d+(\.\d+)?%)")
_COUNTED = re.compile(r"(\d+(\.\d+)?)[多余几]?" + _QUANTIFIER)
_DIGIT_RUN = re.compile(r"(\d{4,32})")
_NUMBER = re.compile(r"(\d+(\.\d+)?)")
_LETTERS_TWO = re.compile(r"(([a-zA-Z]+)二([a-zA-Z]+))")

# a symbol list: ("d", value) a digit, ("u", power) a unit, ("p", 0) the decimal point, ("l", 2) 两
Symbol = tuple[str, int]


def _spell(value_string: str) -> list[Symbol]:
    """An integer string as digits and units, recursively on the largest unit below its length; zeros
    inside are kept once ("105" -> 一百零五), leading zeros of a part give one 零."""
    stripped = value_string.lstrip("0")
    if not stripped:
        return []
    if len(stripped) == 1:
        d = ("d", int(stripped))
        return [("d", 0), d] if len(value_string) != len(stripped) else [d]
    power = next(p for p, _ in reversed(_UNITS) if p < len(stripped))
    return _spell(value_string[:-power]) + [("u", power)] + _spell(stripped[-power:])


def num2chn(number: str, *, alt_two: bool = True, use_units: bool = True) -> str:
    """A number string (``"12.5"``) in simplified Chinese numerals: with units (十二点五) or digit by
    digit (``use_units=False``); 二 before a unit above 十 reads 两 (``alt_two``); 一十.. reads 十.."""
    parts = number.split(".")
    if len(parts) > 2:
        raise ValueError(f"invalid number with more than one dot: {number}")
    whole, frac = parts[0], parts[1] if len(parts) == 2 else ""
    syms = _spell(whole) if use_units and len(whole) > 1 else [("d", int(c)) for c in whole]
    if frac:
        syms += [("p", 0)] + [("d", int(c)) for c in frac]
    if alt_two:
        for i, (kind, v) in enumerate(syms):
            if kind in ("d", "l") and v == 2:
                nxt = syms[i + 1] if i < len(syms) - 1 else None
                prev = syms[i - 1] if i > 0 else None
                if nxt is not None and nxt[0] == "u" and (prev is None or prev[0] == "u"):
                    if nxt[1] != 1 and (prev is None or prev[1] != 1):
                        syms[i] = ("l", 2)
    units = dict(_UNITS)
    out = "".join(_DIGITS[v] if k == "d" else units[v] if k == "u" else "点" if k == "p" else "两" for k, v in syms)
    if out.startswith("点"):
        return "零" + out
    if len(out) >= 2 and out[1] == "十" and out[0] == "一":
        out = out[1:]
    return out


def _digits(number: str) -> str:
    return num2chn(number, alt_two=False, use_units=False)


def _date(date: str) -> str:
    """``2018年3月5日`` -> 二零一八年三月五日: the year digit by digit, month and day as cardinals."""
    if "年" in date.strip():
        year, other = date.strip().split("年", 1)
        year = _digits(year) + "年"
    else:
        year, other = "", date
    month = day = ""
    if other:
        if "月" in other.strip():
            month, day = other.strip().split("月", 1)
            month = num2chn(month) + "月"
        else:
            day = date
        if day:
            day = num2chn(day[:-1]) + day[-1]
    return year + month + day


def _money(money: str) -> str:
    for m in _NUMBER.findall(money):
        money = money.replace(m[0], num2chn(m[0]))
    return money


def _mobile(phone: str) -> str:
    return "".join(_digits(p) for p in phone.strip("+").split())


def _fixed(phone: str) -> str:
    return "".join(_digits(p) for p in phone.split("-"))


def _fraction(frac: str) -> str:
    num, den = frac.split("/")
    return num2chn(den) + "分之" + num2chn(num)


def _first(found: list, group: bool) -> list[str]:
    return [m[0] if group else m for m in found]


def normalize_numbers(raw: str) -> str:
    """Every Arabic number of ``raw`` as Chinese numerals, in the normaliser's order of rewrites."""
    text = "^" + raw + "$"
    steps = ((_DATE, True, _date), (_MONEY, True, _money), (_MOBILE, True, _mobile), (_FIXED, True, _fixed),
             (_FRACTION, False, _fraction))
    for rx, group, fn in steps:
        for m in _first(rx.findall(text), group):
            text = text.replace(m, fn(m), 1)
    text = text.replace("％", "%")
    for m in _first(_PERCENT.findall(text), True):
        text = text.replace(m, "百分之" + num2chn(m.strip().strip("%")), 1)
    for rx, group, fn in ((_COUNTED, True, num2chn), (_DIGIT_RUN, False, _digits), (_NUMBER, True, num2chn)):
        for m in _first(rx.findall(text), group):
            text = text.replace(m, fn(m), 1)
    for m in _LETTERS_TWO.findall(text):
        text = text.replace(m[0], m[1] + "2" + m[2], 1)
    return text.lstrip("^").rstrip("$")
