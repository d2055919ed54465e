"""Built-in sentence bank for the synthetic NVV corpus (no dependency on ``/work/shared``).

Short conversational, emotionally coloured utterances in the style of the NVV-SuperBench item
files (one to three clauses, punctuation between them, where real items usually carry their tag).
Constraints that keep the rendered audio honest: no digits or symbols (spoken forms would change the
syllable count), no laughter words (``haha``, 哈/呵/嘿/嘻) that the speech renderer treats specially,
EN >= 8 words and ZH >= 12 characters so a "misplaced" event can always land more than the matching
tolerance (2 words / 5 characters) away from the ground-truth position.

Also here: how texts are cut into position units and where a tag may go (:func:`tokens`,
:func:`boundaries`: EN word boundaries / ZH character boundaries not before punctuation, positions
counted with ``count_units``), the GT placement mix (:func:`pick_gt_position`), the marked text
(:func:`mark_text`) and the optional real-item texts (:func:`real_texts`).
"""
from __future__ import annotations

import json
import re
import unicodedata
import zlib
from pathlib import Path

from evaluators.benchmarks.nvv.items import count_units, parse_marked_text

__all__ = ["EN_SENTENCES", "LAUGH_TOKENS", "SENTENCES", "ZH_SENTENCES", "boundaries", "is_punct", "mark_text",
           "pick_gt_position", "real_texts", "sentence_id", "tokens"]

EN_SENTENCES: tuple[str, ...] = (
    "I told you already, I really don't want to talk about it tonight.",
    "Okay, okay, I get it. You were right and I was wrong.",
    "Wait, you mean the whole thing was a joke the entire time?",
    "I have been walking for hours and my feet are killing me.",
    "Please, just give me one more minute. I am almost done.",
    "Oh, that is so sweet of you. You really didn't have to.",
    "I can't believe the train left without us again this morning.",
    "Honestly, I thought the movie would be better than that.",
    "Look at this mess. Who left the door open all night?",
    "We missed the last bus, so now we have to walk home.",
    "I am so sorry, I completely forgot about our dinner plans.",
    "Fine. Do whatever you want, I am not going to stop you.",
    "She said yes! I still can't believe she actually said yes.",
    "My throat has been sore all week and it is getting worse.",
    "Could you turn the music down a little? I am trying to sleep.",
    "That was the longest meeting of my life, and nothing got decided.",
    "Well, look who finally decided to show up for work today.",
    "I found the keys, they were in my coat pocket the whole time.",
    "Listen, I know this is hard, but we will get through it together.",
    "No, no, no. That is not what I meant at all.",
    "The coffee here is terrible, but the view makes up for it.",
    "I just ran up four flights of stairs because the lift was broken.",
    "Do you ever feel like the week is never going to end?",
    "He left without saying goodbye. Not a single word.",
    "Sure, I will clean the kitchen again. Nobody else ever does.",
    "It is freezing out here. I should have brought a warmer jacket.",
    "Good morning, everyone. Let us get started with the first item.",
    "I was so nervous that I forgot my own name for a second.",
    "Wow, you really outdid yourself with this cake. It looks amazing.",
    "Stop it, you are making me blush in front of everybody.",
    "I don't know what happened. One moment it was working, then nothing.",
    "We waited outside in the rain for almost an hour.",
    "Tell me the truth. Did you read my diary or not?",
    "The baby finally fell asleep, so please keep your voice down.",
    "I think I ate too much. I can barely move right now.",
    "You should have seen his face when the lights came on.",
    "That noise again. Did you hear it too, or is it just me?",
    "Come on, just one more game, and then we can go home.",
    "I miss the old days, when we used to talk every night.",
    "The doctor said it is nothing serious, just a bad cold.",
    "Ugh, my phone died right in the middle of the call.",
    "Are you seriously going to wear that to the wedding?",
    "I have no idea where we are. The map makes no sense.",
    "Thank you for staying with me. I didn't want to be alone.",
    "This is the third time this month the power went out.",
    "Quiet, somebody is coming down the hall right now.",
    "I told myself I would not cry, and look at me now.",
    "Can we please talk about something else for a change?",
    "My grandmother used to sing that song when I was little.",
    "Well, that went about as badly as it possibly could.",
    "I am not angry, I am just very, very disappointed.",
    "Hold on, let me catch my breath before I explain everything.",
    "The exam was impossible. I didn't even finish the first page.",
    "Guess what? We are going to the beach this weekend after all.",
    "Why does everything always happen to me on a Monday?",
    "I really thought I had lost it forever, but here it is.",
    "Be careful on the ice, the whole path is covered in it.",
    "Sorry, the connection is bad. Could you say that again?",
    "I made you some soup. It should help with that cough.",
    "Seriously, who eats cold pizza for breakfast every single day?",
    "After all these years, you still remember my favourite flower.",
    "Nobody told me the party was tonight. Nobody ever tells me anything.",
    "Just breathe. You are safe now, and nobody is going to hurt you.",
    "The dog ate my sandwich again while I was not looking.",
    "I have read this letter ten times and I still don't understand it.",
    "Let me guess, you forgot your wallet at home again.",
)

ZH_SENTENCES: tuple[str, ...] = (
    "我都说了多少遍了，今天晚上真的不想再提这件事。",
    "好吧好吧，我承认，这次确实是我错了。",
    "等一下，你的意思是这一切从头到尾都是个玩笑？",
    "我已经走了好几个小时，脚都快要断了。",
    "再给我一分钟，就一分钟，我马上就弄完了。",
    "你真是太贴心了，其实完全不用这么麻烦的。",
    "真不敢相信，火车今天早上又把我们丢下了。",
    "说实话，我本来以为这部电影会更好看一点。",
    "你看看这一地的东西，昨晚是谁没关门的？",
    "最后一班公交车已经走了，我们只能走回家了。",
    "真的对不起，我完全把我们的晚饭约定给忘了。",
    "行，你想怎么样就怎么样吧，我不拦着你。",
    "她答应了！我到现在都不敢相信她真的答应了。",
    "我的嗓子疼了一整个星期，而且越来越严重了。",
    "你能把音乐关小一点吗？我正想睡一会儿。",
    "这是我这辈子开过最长的会，结果什么都没定下来。",
    "哟，看看是谁终于想起来今天要上班了。",
    "钥匙找到了，原来一直就在我的外套口袋里。",
    "我知道这很难受，但是我们一起一定能熬过去的。",
    "不不不，我根本就不是这个意思。",
    "这里的咖啡难喝得要命，不过风景还算不错。",
    "电梯坏了，我刚刚一口气爬了四层楼梯。",
    "你有没有觉得，这个星期好像永远都过不完？",
    "他就这么走了，连一句再见都没有说。",
    "好啊，厨房又是我来收拾，反正从来没人管。",
    "外面也太冷了，我早该多穿一件厚外套的。",
    "大家早上好，我们现在开始讨论第一个议题吧。",
    "我当时紧张得连自己的名字都差点忘了。",
    "这个蛋糕也太漂亮了吧，你这次真是用心了。",
    "别闹了，大家都看着呢，我脸都红了。",
    "我也不知道怎么回事，刚才还好好的，突然就不动了。",
    "我们在雨里站着等了差不多整整一个小时。",
    "你老实告诉我，你到底有没有偷看我的日记？",
    "宝宝好不容易才睡着，你说话小声一点好吗？",
    "我好像吃得太多了，现在撑得都动不了了。",
    "灯一亮的时候，你真该看看他脸上的表情。",
    "又是那个声音，你也听到了吧，还是只有我听到了？",
    "再玩最后一局，就一局，玩完我们就回家。",
    "我好怀念以前，那时候我们每天晚上都会聊天。",
    "医生说没什么大问题，就是一场比较重的感冒。",
    "真烦人，电话打到一半手机突然没电了。",
    "你不会真的打算穿成这样去参加婚礼吧？",
    "我完全不知道我们现在在哪儿，这张地图根本看不懂。",
    "谢谢你留下来陪我，我真的不想一个人待着。",
    "这个月已经是第三次停电了，到底怎么回事啊。",
    "嘘，别出声，走廊那边有人过来了。",
    "我跟自己说好了不哭的，结果你看看我现在。",
    "我们能不能换个话题，别老说这个了好吗？",
    "这首歌是我小时候外婆经常唱给我听的。",
    "好了，这下可好，事情糟得不能再糟了。",
    "我没有生气，我只是对你非常非常失望。",
    "等等，先让我喘口气，我再慢慢跟你解释。",
    "这次考试太难了，我连第一页都没有做完。",
    "你猜怎么着？这个周末我们还是要去海边了！",
    "为什么所有倒霉的事情都偏偏发生在星期一？",
    "我还以为它永远找不回来了，没想到就在这儿。",
    "路上全是冰，你走路的时候一定要小心一点。",
    "不好意思，信号不太好，你能再说一遍吗？",
    "我给你煮了点汤，喝了嗓子应该会舒服一些。",
    "说真的，谁会每天早上都吃凉掉的披萨啊？",
    "这么多年过去了，你居然还记得我最喜欢的花。",
    "根本没人告诉我今晚有聚会，从来都没人告诉我。",
    "慢慢呼吸，你现在安全了，没有人会再伤害你。",
    "趁我不注意，这只狗又把我的三明治吃掉了。",
    "这封信我已经读了好多遍，还是看不太明白。",
    "让我猜猜，你是不是又把钱包忘在家里了？",
)

SENTENCES: dict[str, tuple[str, ...]] = {"en": EN_SENTENCES, "zh": ZH_SENTENCES}


# ----------------------------------------------------------------------------- tokens and boundaries

# laughter words are rendered specially by speech.py; real texts containing them are skipped
LAUGH_TOKENS = re.compile(r"[哈呵嘿嘻]|\b(?:ha|he|hi){2,}h?\b", re.IGNORECASE)


def is_punct(ch: str) -> bool:
    """Unicode punctuation or symbol (``，``, ``...``, ``—``)."""
    return unicodedata.category(ch)[0] in "PS"


def real_texts(folder: str, lang: str) -> list[str]:
    """Clean texts of a real item file that suit the renderer (short, no digits/Latin in ZH/laughs)."""
    path = Path(folder) / f"nvbench_data_{lang}.json"
    if not path.exists():
        return []
    out = []
    for row in json.loads(path.read_text(encoding="utf-8")):
        try:  # the tag-stripped marked text is what positions are counted in
            text = parse_marked_text(row["text_with_mark"], lang)[0]
        except (KeyError, ValueError):
            text = str(row.get("text", ""))
        if lang == "zh":
            text = "".join(text.split())
        n = count_units(text, lang)
        bad = re.search(r"\d", text) or LAUGH_TOKENS.search(text) or (lang == "zh" and re.search(r"[A-Za-z]", text))
        if not bad and ((8 <= n <= 24) if lang == "en" else (12 <= n <= 36)):
            out.append(text)
    return out


def tokens(text: str, lang: str) -> list[str]:
    """EN: whitespace tokens (punctuation stays on its word); ZH: non-space characters."""
    return text.split() if lang == "en" else [c for c in text if not c.isspace()]


def boundaries(toks: list[str], lang: str) -> dict[int, tuple[int, str]]:
    """position (units before) -> (token index, kind in start/punct/word/end) for allowed boundaries.
    ZH boundaries never precede punctuation (tags follow it in the real data)."""
    out, pos = {}, 0
    for b in range(len(toks) + 1):
        if b > 0:
            pos += count_units(toks[b - 1], lang)
        if lang == "zh" and b < len(toks) and is_punct(toks[b]):
            continue
        kind = "start" if b == 0 else "end" if b == len(toks) else "punct" if is_punct(toks[b - 1][-1]) else "word"
        if not (kind == "start" and pos > 0):
            out[pos] = (b, kind)
    return out


def pick_gt_position(bounds: dict, lang: str, rng) -> int:
    """GT position with roughly the real data's placement mix: often at the start, mostly after
    punctuation, sometimes mid-clause, rarely at the very end."""
    by = {k: [p for p, (_, kk) in bounds.items() if kk == k] for k in ("start", "punct", "word", "end")}
    u = rng.random()
    p_start = 0.35 if lang == "zh" else 0.22
    for kind, edge in (("start", p_start), ("end", p_start + 0.03), ("punct", p_start + 0.5)):
        if u < edge and by[kind]:
            return int(rng.choice(by[kind]))
    return int(rng.choice(by["word"] or list(bounds)))


def mark_text(toks: list[str], lang: str, b: int, label: str) -> str:
    """The text with ``<label>`` before token ``b``, spaced like the real item files."""
    if lang == "en":
        return " ".join(toks[:b] + [f"<{label}>"] + toks[b:])
    return "".join(toks[:b]) + f"<{label}>" + (" " + "".join(toks[b:]) if b < len(toks) else "")


def sentence_id(text: str, lang: str) -> str:
    """``en-007`` for built-in sentence 7, ``en-real-<crc32>`` for a real item's text (stable ids)."""
    if text in SENTENCES[lang]:
        return f"{lang}-{SENTENCES[lang].index(text):03d}"
    return f"{lang}-real-{zlib.crc32(text.encode('utf-8')):08x}"
