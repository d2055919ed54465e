"""Sentence banks with stress candidates, CAST style (EN and ZH), for the synthetic corpora.

The word-stress (CAST) corpus reads every field; the SpeechEditBench judge corpus reads the
sentences only (through :func:`parse_sentence`). Each entry is one target sentence with two stress
candidates and a context for each:

    (sentence, ia, alt_a, context_a, ib, alt_b, context_b)

* `sentence`: words separated by single spaces, punctuation attached to the word before it. For
  Chinese the spaces mark the word segmentation (removed in the displayed sentence); a comma or other
  mid-sentence punctuation makes a phrase break (a pause) after that word.
* `ia` / `ib`: 0-based word indices of the two candidates (side A stresses `ia`, side B `ib`).
* `alt_a` / `alt_b`: the wrong alternative each context proposes (used to build a double-focus context).
* `context_a` / `context_b`: a short preceding turn that makes the candidate the focus, e.g. a
  correction ("Did Mary buy the red car?" -> "JOHN bought the red car.").

Rules kept by the banks (checked by tests): 4-14 words per sentence, at least 40 entries per language,
some sentences with a repeated word (sometimes the stressed occurrence is the repeat, so a detector
must use the word index, not the string), some 14-word English sentences.
"""
from __future__ import annotations

import re

__all__ = ["SENTENCES", "BROAD_CONTEXTS", "double_focus_context", "parse_sentence"]

_EN = [
    ("John bought the red car.", 0, "Mary", "Did Mary buy the red car?", 3, "blue", "Did John buy the blue car?"),
    ("She published the essay in the winter issue.", 3, "poem", "Did she publish a poem in the winter issue?",
     6, "spring", "She published the essay in the spring issue, right?"),
    ("The manager booked the flight.", 1, "intern", "Did the intern book the flight?",
     4, "hotel", "The manager booked the hotel, right?"),
    ("My sister lives in Boston.", 1, "brother", "Your brother lives in Boston, right?",
     4, "Chicago", "Your sister lives in Chicago, doesn't she?"),
    ("We are meeting at the station on Friday.", 5, "airport", "Are we meeting at the airport on Friday?",
     7, "Saturday", "We are meeting at the station on Saturday, right?"),
    ("Tom ordered the soup and a salad.", 0, "Anna", "Did Anna order the soup and a salad?",
     3, "pasta", "Tom ordered the pasta and a salad?"),
    ("The children painted the fence yesterday.", 1, "neighbours", "Did the neighbours paint the fence yesterday?",
     5, "today", "Did the children paint the fence today?"),
    ("I left my keys in the kitchen.", 3, "phone", "Did you leave your phone in the kitchen?",
     6, "car", "You left your keys in the car?"),
    ("The incubator selected Priya as the startup mentor.", 3, "Tom", "I thought Tom was the mentor here.",
     7, "investor", "People assumed she would be the startup investor."),
    ("Anna called Ben, and then Ben called Anna.", 5, "Carl", "And then Carl called Anna back?",
     7, "Dora", "And then Ben called Dora?"),
    ("The cat sat on the mat, and the dog sat on the cat.", 8, "bird", "And then the bird sat on the cat?",
     12, "rug", "And the dog sat on the rug?"),
    ("She wants the red cup, not the green cup.", 3, "blue", "She wants the blue cup, not the green one?",
     7, "yellow", "She wants the red cup, not the yellow one?"),
    ("Our team won the final match last night.", 0, "their", "Did their team win the final match last night?",
     7, "week", "Your team won the final match last week?"),
    ("The doctor will call you tomorrow morning.", 1, "nurse", "Will the nurse call me tomorrow morning?",
     6, "evening", "Will the doctor call me tomorrow evening?"),
    ("He painted the bedroom walls a pale yellow.", 3, "kitchen", "Did he paint the kitchen walls a pale yellow?",
     7, "green", "He painted the bedroom walls a pale green?"),
    ("Maria teaches chemistry at the high school.", 2, "physics", "Does Maria teach physics at the high school?",
     0, "Elena", "Does Elena teach chemistry at the high school?"),
    ("The train to London leaves at noon.", 3, "Paris", "Does the train to Paris leave at noon?",
     6, "midnight", "The train to London leaves at midnight?"),
    ("After the meeting, the whole team went to the small cafe near the river.", 10, "bar",
     "After the meeting, did the team go to the small bar near the river?",
     13, "station", "Was it the small cafe near the station?"),
    ("My grandmother baked three apple pies for the party on Sunday afternoon last week.", 1, "aunt",
     "Your aunt baked three apple pies for the party?", 10, "Saturday", "Was the party on Saturday afternoon?"),
    ("The new library downtown will open its doors to the public in early spring.", 2, "museum",
     "Will the new museum downtown open in early spring?", 13, "summer", "The library opens in early summer, right?"),
    ("Before you leave, please check that every window in the house is locked.", 7, "door",
     "Should I check that every door in the house is locked?",
     12, "open", "Should every window in the house be open before I leave?"),
    ("The students in the second row asked the professor a question about the exam.", 4, "first",
     "Did the students in the first row ask the question?", 13, "homework", "Was their question about the homework?"),
    ("Emma found a small black kitten in the garden.", 4, "white", "Emma found a small white kitten?",
     8, "garage", "Did Emma find the kitten in the garage?"),
    ("The bakery sells fresh bread every morning.", 4, "cake", "Does the bakery sell fresh cake every morning?",
     6, "evening", "The bakery sells fresh bread every evening?"),
    ("We drove to the coast in the old van.", 1, "flew", "Did you fly to the coast?",
     7, "new", "You drove to the coast in the new van?"),
    ("Peter forgot his umbrella at the office.", 0, "Sam", "Did Sam forget his umbrella at the office?",
     3, "laptop", "Peter forgot his laptop at the office?"),
    ("The museum closes at six on weekdays.", 4, "five", "Does the museum close at five on weekdays?",
     6, "weekends", "Does the museum close at six on weekends?"),
    ("Lucy sent the letter to her cousin.", 3, "parcel", "Lucy sent the parcel to her cousin?",
     6, "uncle", "Did Lucy send the letter to her uncle?"),
    ("The dog barked at the mailman again.", 5, "gardener", "Did the dog bark at the gardener again?",
     2, "growled", "Did the dog growl at the mailman again?"),
    ("I prefer green tea with a little honey.", 2, "black", "Do you prefer black tea with a little honey?",
     7, "sugar", "You prefer green tea with a little sugar?"),
    ("The plumber fixed the sink on Tuesday.", 1, "electrician", "Did the electrician fix the sink on Tuesday?",
     4, "shower", "Did the plumber fix the shower on Tuesday?"),
    ("Sarah plays the violin, and her brother plays the violin too.", 6, "sister",
     "And her sister plays the violin too?", 9, "piano", "And her brother plays the piano?"),
    ("The red house on the corner belongs to my uncle.", 1, "white",
     "Does the white house on the corner belong to your uncle?",
     9, "aunt", "The red house on the corner belongs to your aunt?"),
    ("They planted tomatoes along the south fence.", 2, "potatoes", "Did they plant potatoes along the south fence?",
     5, "north", "Did they plant tomatoes along the north fence?"),
    ("Kevin runs five miles every morning before work.", 2, "three", "Kevin runs three miles every morning?",
     5, "evening", "Does Kevin run five miles every evening?"),
    ("The pilot announced a short delay.", 1, "steward", "Did the steward announce a short delay?",
     4, "long", "Did the pilot announce a long delay?"),
    ("Ben borrowed my bike.", 1, "stole", "Did Ben steal your bike?", 3, "car", "Did Ben borrow your car?"),
    ("Alice wrote the report.", 0, "David", "Did David write the report?", 1, "read", "Did Alice read the report?"),
    ("The concert starts at eight, not at nine, so we have time for dinner.", 1, "play",
     "Does the play start at eight?", 13, "drinks", "So we have time for drinks first?"),
    ("My brother and I visited our grandparents in the countryside every summer as children.", 1, "sister",
     "You and your sister visited your grandparents every summer?",
     11, "winter", "You visited your grandparents in the countryside every winter?"),
    ("The waiter brought us the wrong soup twice.", 6, "salad", "The waiter brought you the wrong salad twice?",
     7, "once", "The waiter brought you the wrong soup once?"),
    ("Grace is learning French at night school this year.", 3, "Spanish", "Is Grace learning Spanish at night school?",
     7, "last", "Grace learned French at night school last year?"),
]

_ZH = [
    ("小明 昨天 买了 一辆 红色的 汽车。", 0, "小红", "小红昨天买了一辆红色的汽车吗？", 4, "蓝色的", "小明昨天买了一辆蓝色的汽车吗？"),
    ("我 妈妈 在 医院 工作。", 1, "爸爸", "你爸爸在医院工作吗？", 3, "学校", "你妈妈在学校工作吧？"),
    ("他们 明天 上午 去 北京。", 1, "今天", "他们今天上午去北京吗？", 4, "上海", "他们明天上午去上海吗？"),
    ("老师 让 我们 写 一篇 作文。", 0, "校长", "是校长让你们写作文吗？", 5, "日记", "老师让你们写一篇日记吗？"),
    ("她 喜欢 喝 绿茶，不 喜欢 喝 咖啡。", 3, "红茶", "她喜欢喝红茶吗？", 7, "果汁", "她不喜欢喝果汁吗？"),
    ("我 把 钥匙 忘 在 办公室 了。", 2, "手机", "你把手机忘在办公室了？", 5, "车上", "你把钥匙忘在车上了？"),
    ("哥哥 每天 早上 跑 五 公里。", 0, "弟弟", "你弟弟每天早上跑五公里吗？", 4, "三", "你哥哥每天早上跑三公里吗？"),
    ("这家 饭馆 的 饺子 特别 好吃。", 3, "面条", "这家饭馆的面条特别好吃吗？", 5, "贵", "这家饭馆的饺子特别贵吧？"),
    ("王经理 下午 三点 开会。", 0, "李经理", "李经理下午三点开会吗？", 2, "四点", "王经理下午四点开会吗？"),
    ("我 的 猫 喜欢 睡 在 沙发 上。", 2, "狗", "你的狗喜欢睡在沙发上吗？", 6, "床", "你的猫喜欢睡在床上吗？"),
    ("妹妹 在 花园 里 找到 了 一只 小猫。", 2, "车库", "妹妹在车库里找到了小猫？", 7, "小狗", "妹妹在花园里找到了一只小狗？"),
    ("张老师 教 我们 数学。", 0, "李老师", "李老师教你们数学吗？", 3, "物理", "张老师教你们物理吗？"),
    ("火车 晚上 八点 从 上海 出发。", 2, "九点", "火车晚上九点出发吗？", 4, "南京", "火车是从南京出发吗？"),
    ("他 用 左手 写字。", 0, "你", "你用左手写字吗？", 2, "右手", "他用右手写字吗？"),
    ("我们 周六 去 公园 野餐 吧。", 1, "周日", "我们周日去野餐吗？", 3, "海边", "我们去海边野餐吗？"),
    ("爷爷 在 院子 里 种 了 很多 西红柿。", 0, "奶奶", "奶奶在院子里种了西红柿吗？", 7, "土豆", "爷爷在院子里种了很多土豆吗？"),
    ("小李 借 了 我 的 自行车。", 1, "偷", "小李偷了你的自行车？", 5, "电脑", "小李借了你的电脑吗？"),
    ("她 穿着 一条 白色的 裙子。", 3, "黑色的", "她穿着一条黑色的裙子吗？", 4, "裤子", "她穿着一条白色的裤子吗？"),
    ("医生 说 他 明天 可以 出院。", 0, "护士", "是护士说他明天可以出院吗？", 3, "后天", "医生说他后天可以出院？"),
    ("弟弟 打碎 了 妈妈 最 喜欢 的 花瓶。", 0, "姐姐", "是姐姐打碎了花瓶吗？", 7, "杯子", "弟弟打碎了妈妈最喜欢的杯子？"),
    ("昨天 晚上 我 和 几个 老 同学 在 学校 附近 的 小 饭馆 吃饭。", 6, "同事", "你昨天晚上和老同事吃饭了？",
     8, "公司", "你们在公司附近的饭馆吃饭吗？"),
    ("我 的 同桌 借 了 我 的 橡皮，又 借 了 我 的 尺子。", 7, "铅笔", "你同桌借了你的铅笔，又借了尺子？",
     13, "本子", "他借了你的橡皮，又借了你的本子？"),
    ("这本 小说 是 我 去年 在 北京 买 的。", 4, "前年", "这本小说是你前年买的吗？", 6, "上海", "这本小说是你在上海买的吗？"),
    ("明天 的 考试 从 九点 开始。", 0, "后天", "后天的考试九点开始吗？", 4, "十点", "明天的考试从十点开始吗？"),
    ("姐姐 给 我 买 了 一件 蓝色的 毛衣。", 0, "妈妈", "是妈妈给你买的毛衣吗？", 6, "灰色的", "姐姐给你买了一件灰色的毛衣？"),
    ("我们 坐 飞机 去 广州。", 2, "火车", "你们坐火车去广州吗？", 4, "深圳", "你们坐飞机去深圳吗？"),
    ("这个 周末 公司 要 加班。", 0, "下个", "下个周末公司要加班吗？", 4, "开会", "这个周末公司要开会吗？"),
    ("我 每天 早上 七点 起床，先 跑步 半个 小时，然后 吃 早饭。", 3, "六点", "你每天早上六点起床吗？",
     6, "看书", "你起床以后先看书半个小时吗？"),
    ("他 的 女儿 在 银行 当 会计。", 2, "儿子", "他的儿子在银行当会计吗？", 6, "经理", "他女儿在银行当经理吗？"),
    ("奶奶 做 的 红烧肉 最 好吃。", 0, "爷爷", "爷爷做的红烧肉最好吃吗？", 3, "饺子", "奶奶做的饺子最好吃吗？"),
    ("我 喜欢 春天，他 也 喜欢 春天。", 0, "你", "你喜欢春天吗？", 6, "夏天", "他也喜欢夏天吗？"),
    ("小王 把 报告 发给 了 张经理。", 2, "合同", "小王把合同发给张经理了吗？", 5, "李经理", "小王把报告发给李经理了？"),
    ("今天 的 天气 比 昨天 暖和。", 0, "明天", "明天的天气比昨天暖和吗？", 5, "冷", "今天比昨天冷吗？"),
    ("我 在 网上 订 了 两张 电影票。", 5, "三张", "你订了三张电影票吗？", 6, "火车票", "你在网上订了两张火车票？"),
    ("上个 星期 我们 全家 开车 去 海边 玩 了 三天，天气 一直 很 好。", 6, "山里", "你们全家去山里玩了三天？",
     9, "两天", "你们在海边玩了两天吗？"),
    ("他 考试 得 了 第一名。", 0, "你", "你考试得了第一名吗？", 4, "第二名", "他考试得了第二名吗？"),
    ("李阿姨 养 了 三只 小狗。", 0, "王阿姨", "王阿姨养了三只小狗吗？", 3, "两只", "李阿姨养了两只小狗吗？"),
    ("我们 班 的 足球队 赢 了 比赛。", 3, "篮球队", "你们班的篮球队赢了比赛吗？", 4, "输", "你们班的足球队输了比赛？"),
    ("如果 明天 不 下雨，我们 就 去 山上 看 日出，然后 下午 回家。", 7, "海边", "如果不下雨，我们去海边看日出吗？",
     9, "日落", "我们去山上看日落吗？"),
    ("这件 事情 是 小张 告诉 我 的。", 3, "小刘", "这件事情是小刘告诉你的吗？", 5, "他", "这件事是小张告诉他的吗？"),
    ("我 的 朋友 下个 月 要 从 美国 回来，我们 打算 一起 去 旅游。", 3, "这个", "你朋友这个月要回来吗？",
     7, "英国", "你朋友要从英国回来吗？"),
    ("哥哥 喜欢 打 篮球，弟弟 喜欢 踢 足球。", 3, "排球", "哥哥喜欢打排球吗？", 4, "妹妹", "你妹妹喜欢踢足球吗？"),
    ("小刚 在 图书馆 看 了 一下午 的 书。", 2, "教室", "小刚在教室看了一下午的书吗？", 5, "一上午", "小刚在图书馆看了一上午的书？"),
]

SENTENCES: dict[str, list[tuple]] = {"en": _EN, "zh": _ZH}

# Broad-focus turns for unstressed control sentences: nothing in them singles out a word.
BROAD_CONTEXTS = {
    "en": ["What happened?", "Tell me what you heard.", "Any news?", "So, what is the story?", "What is going on?"],
    "zh": ["怎么了？", "发生什么事了？", "有什么新消息吗？", "说说看。", "你听说了什么？"],
}

_PUNCT = ",.!?;:，。！？、；："


def double_focus_context(lang: str, alt_a: str, alt_b: str) -> str:
    """A clarification turn echoing both wrong alternatives, so both candidates are in focus."""
    return f"Wait, was it {alt_a}, and {alt_b}?" if lang == "en" else f"你是说{alt_a}，还有{alt_b}吗？"


def parse_sentence(raw: str, lang: str) -> tuple[str, list[str], list[bool]]:
    """Bank sentence -> (display sentence, words, pause_after). `pause_after[i]` is True when the word
    carries mid-sentence punctuation (a phrase break), never for the last word."""
    tokens = re.sub(f"([{_PUNCT}])", r"\1 ", raw).split()  # a break may be written without a space
    words = [t.strip(_PUNCT) for t in tokens]
    if any(not w for w in words):
        raise ValueError(f"empty word in bank sentence {raw!r}")
    pause = [t[-1] in _PUNCT for t in tokens]
    pause[-1] = False
    text = " ".join(tokens) if lang == "en" else "".join(tokens)
    return text, words, pause
