"""Phrase banks (data only) for the synthetic InstructTTSEval instructions, English and Chinese.

The benchmark (paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction Following
in Text-to-Speech Systems") writes its instructions in three forms: APS (one ``dimension: description.``
line per dimension), DSD (a free-form directive) and RP (a role-play scenario). The logic that
assembles them lives in ``instructions.py``; this module only holds the wording.

Conventions:

* ``PHRASES[lang][attribute][value]`` are paraphrase variants, ordered so that the first ~2/3 form the
  *train* pool and the rest the *test* pool (test instructions are never seen in training).
  Attributes are those of ``attributes.VoiceAttributes``; a pitch, speed or volume description is a
  level variant joined to a change variant (``pitch`` + ``pitch_contour`` ...), the change always
  stated, "steady" included, so that a near miss on the change alone is visible in the text.
  ``gender`` and ``age`` hold the short APS forms; directives name the speaker with ``SPEAKERS``.
* ``[a ]`` / ``[an ]`` marks an English article kept inside a sentence and dropped on an APS line
  (``[a ]low pitch`` -> "Low pitch." / "... with a low pitch"); ``{g}`` is the slot of a relative
  gender word ("low male pitch"), left empty where the instruction does not state the gender.
* Degree words are faithful to the renderer: loud = shouting / yelling, soft = whispery / very
  quiet, normal = conversational level; pitch and speed levels are far apart (see ``attributes``).
* Words that belong to another dimension are avoided (e.g. no "flat" for a steady pitch contour, it
  reads as monotone; no "crisp" for a bright texture, it reads as clarity).
"""

from __future__ import annotations

#: Chinese APS line keys, one per benchmark dimension.
ZH_DIMENSION_NAMES = {"gender": "性别", "pitch": "音高", "speed": "语速", "volume": "音量", "age": "年龄",
                      "clarity": "清晰度", "fluency": "流畅度", "accent": "口音", "texture": "音色质感",
                      "emotion": "情绪", "tone": "语调", "personality": "性格"}

#: Words filling the ``{g}`` slot of pitch phrases.
GENDER_WORDS = {"en": {"male": "male ", "female": "female "}, "zh": {"male": "男性", "female": "女性"}}

PHRASES: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "en": {
        "gender": {
            "male": ("Male", "Male voice", "Male speaker", "A man's voice", "Adult male", "Masculine, male voice"),
            "female": ("Female", "Female voice", "Female speaker", "A woman's voice", "Adult female",
                       "Feminine, female voice"),
        },
        "age": {
            "young": ("Young adult", "Young adult, roughly in their twenties", "Youthful adult",
                      "Young adult speaker", "Early adulthood, youthful-sounding", "A young adult, twenty-something"),
            "elderly": ("Elderly", "Elderly adult", "Senior, around seventy", "Older adult of advanced age",
                        "Aged, elderly-sounding", "An elderly person, well past retirement age"),
        },
        "pitch": {
            "low": ("[a ]low {g}pitch", "[a ]deep, low-set {g}pitch", "[a ]pitch sitting low in the {g}range",
                    "[a ]noticeably low {g}pitch", "[a ]low-lying {g}pitch",
                    "[a ]pitch well below the usual {g}register"),
            "mid": ("[a ]mid-range {g}pitch", "[a ]moderate, middle-of-the-range {g}pitch",
                    "[a ]natural mid-level {g}pitch",
                    "[a ]pitch in the ordinary middle of the {g}range", "[a ]medium {g}pitch",
                    "[a ]pitch centred in the typical {g}register"),
            "high": ("[a ]high {g}pitch", "[a ]raised, high-set {g}pitch", "[a ]noticeably high {g}pitch",
                     "[a ]pitch sitting high in the {g}range", "[an ]elevated, high {g}pitch",
                     "[a ]pitch well above the usual {g}register"),
        },
        "pitch_contour": {
            "steady": ("with no overall rise or fall", "keeping the same overall level from start to finish",
                       "neither rising nor falling overall", "without any overall upward or downward drift",
                       "its overall level unchanged from beginning to end", "without an overall climb or drop"),
            "rising": ("rising toward the end", "climbing gradually over the utterance",
                       "drifting upward as the sentence goes on", "starting lower and ending higher",
                       "gradually lifting by the close", "moving steadily upward to the end"),
            "falling": ("falling toward the end", "gradually sinking over the utterance",
                        "drifting downward as the sentence goes on", "starting higher and ending lower",
                        "gradually dropping by the close", "settling steadily downward to the end"),
        },
        "speed": {
            "slow": ("[a ]slow, unhurried pace", "[a ]slow speaking rate", "[a ]leisurely, slow tempo",
                     "[a ]deliberately slow delivery", "[an ]unhurried, drawn-out speaking speed",
                     "[a ]slow, measured rate of speech"),
            "moderate": ("[a ]moderate pace", "[a ]normal, moderate speaking rate",
                         "[a ]medium speed, neither rushed nor slow", "[a ]middle-of-the-road tempo",
                         "[a ]comfortable, average speaking speed", "[an ]everyday, medium rate of speech"),
            "fast": ("[a ]fast pace", "[a ]quick, brisk speaking rate", "[a ]rapid tempo", "[a ]fast, hurried delivery",
                     "[a ]swift, quick-fire speaking speed", "[a ]brisk, rapid rate of speech"),
        },
        "speed_change": {
            "steady": ("kept constant throughout", "with no overall speeding up or slowing down",
                       "holding the same tempo from start to finish", "without changing speed along the way",
                       "held evenly all the way to the end", "staying at one rate the whole way"),
            "speeding_up": ("speeding up as it goes", "gradually accelerating toward the end",
                            "picking up speed in the latter part", "starting slower and finishing quicker",
                            "quickening steadily toward the close", "gathering speed by the end"),
            "slowing_down": ("slowing down as it goes", "gradually decelerating toward the end",
                             "easing off in the latter part", "starting quicker and finishing slower",
                             "relaxing steadily toward the close", "losing speed by the end"),
        },
        "volume": {
            "soft": ("[a ]whispery, very quiet voice", "[a ]very soft, near-whisper volume",
                     "[a ]hushed level, barely above a whisper", "[a ]very quiet, whispery delivery",
                     "[a ]very quiet volume, close to a whisper", "[a ]whisper-soft, very quiet level"),
            "normal": ("[a ]conversational volume", "[a ]normal, conversational level", "[an ]ordinary speaking volume",
                       "[a ]moderate, everyday loudness", "[a ]regular conversational loudness",
                       "[a ]comfortable, conversational level"),
            "loud": ("[a ]very loud, shouting voice", "[a ]yelling, very loud volume", "[a ]shouting level",
                     "[a ]loud, full-on yelling delivery", "[a ]booming, shouted volume",
                     "[a ]very loud volume, close to yelling"),
        },
        "volume_change": {
            "steady": ("kept at the same level throughout", "with no overall swell or fade",
                       "holding steady from start to finish", "without getting louder or quieter",
                       "maintained evenly to the end", "staying constant the whole way"),
            "rising": ("growing louder toward the end", "gradually swelling in volume",
                       "building in loudness as it goes",
                       "starting quieter and ending louder", "getting steadily louder by the close",
                       "rising in volume over the sentence"),
            "falling": ("fading quieter toward the end", "gradually dropping in volume",
                        "tapering off in loudness as it goes", "starting louder and ending quieter",
                        "getting steadily quieter by the close", "trailing off in volume over the sentence"),
        },
        "clarity": {
            "clear": ("clear articulation throughout", "[a ]precise, well-articulated enunciation",
                      "[a ]clean, distinct pronunciation of every word", "[a ]carefully enunciated, clear delivery",
                      "[a ]sharp, easily intelligible diction", "clear, crisp articulation"),
            "mumbled": ("[a ]mumbled, indistinct articulation", "slurred, mumbling diction",
                        "[a ]muffled, hard-to-make-out enunciation",
                        "[a ]blurred articulation where words run together",
                        "[a ]mumbling, unclear pronunciation", "[a ]murky, poorly articulated delivery"),
        },
        "fluency": {
            "fluent": ("[a ]smooth, fluent flow without hesitations", "fluent, connected speech",
                       "[an ]uninterrupted flow with no fillers", "[a ]seamless delivery free of pauses or stumbles",
                       "[a ]fluid, unbroken flow of words", "[a ]polished, hesitation-free flow"),
            "hesitant": ('[a ]hesitant flow with pauses and fillers like "um"',
                         "halting speech with pauses and a repeated word or two", "[a ]faltering, hesitant delivery",
                         "[an ]uneven flow broken by hesitations and fillers",
                         "[a ]stop-and-start delivery with filler words", "[a ]stammering, hesitant flow"),
        },
        "texture": {
            "smooth": ("[a ]smooth, even vocal quality", "[a ]silky, smooth timbre",
                       "[a ]clean, polished voice texture",
                       "[a ]smooth, velvety voice quality", "[a ]sleek, smooth-textured voice",
                       "[a ]round, smooth timbre"),
            "breathy": ("[a ]breathy, airy vocal quality", "[an ]airy timbre with audible breath",
                        "[a ]breathy voice texture", "[a ]breath-laden, airy timbre",
                        "[a ]wispy, breathy voice quality",
                        "[a ]hazy timbre with lots of air in it"),
            "hoarse": ("[a ]hoarse, raspy vocal quality", "[a ]rough, gravelly timbre",
                       "[a ]husky, scratchy voice texture",
                       "[a ]raspy voice with a hoarse edge", "[a ]croaky, rough-edged timbre",
                       "[a ]grainy, hoarse voice quality"),
            "bright": ("[a ]bright, ringing vocal quality", "[a ]bright, forward timbre",
                       "[a ]brilliant, ringing voice texture", "[a ]bright, somewhat brassy voice quality",
                       "[a ]vivid, bright-toned timbre", "[a ]sparkling, bright voice quality"),
        },
        "emotion": {
            "neutral": ("[a ]neutral, matter-of-fact mood", "[a ]calm, emotionally neutral feeling",
                        "no particular emotion, just neutral", "[an ]even, unemotional attitude",
                        "[a ]composed, emotionally neutral state", "[a ]plain, neutral emotional colouring"),
            "happy": ("[a ]happy, cheerful mood", "[a ]joyful, upbeat feeling", "[a ]delighted, glad emotion",
                      "[a ]warm, happy cheerfulness", "[a ]buoyant, joyful spirit", "[a ]gleeful, happy mood"),
            "sad": ("[a ]sad, downcast mood", "[a ]sorrowful, heavy-hearted feeling", "[a ]melancholy, gloomy emotion",
                    "[a ]dejected, unhappy feeling", "[a ]mournful, sad mood", "[a ]grief-tinged, sorrowful emotion"),
            "angry": ("[an ]angry, furious mood", "[an ]irritated, hostile feeling", "[a ]heated, angry emotion",
                      "[an ]indignant, enraged attitude", "[a ]fuming, angry temper", "[a ]livid, resentful anger"),
        },
        "tone": {
            "expressive": ("[an ]expressive, animated intonation with wide pitch swings", "[a ]lively, varied melody",
                           "[a ]dynamic, highly inflected intonation",
                           "[an ]animated delivery with plenty of pitch variation",
                           "[a ]colourful, richly inflected intonation",
                           "[an ]intonation that swoops up and down expressively"),
            "monotone": ("[a ]flat, monotone intonation", "[a ]monotonous delivery with little pitch variation",
                         "[a ]narrow-ranged, unvarying melody", "[a ]droning, monotone reading",
                         "[a ]flat, barely inflected intonation",
                         "[an ]intonation that hardly moves, close to monotone"),
        },
        "personality": {
            "confident": ("[a ]confident, self-assured manner", "[an ]assured, poised presence",
                          "[an ]authoritative, self-assured bearing", "[a ]direct, confident attitude",
                          "[a ]self-possessed, certain air", "[a ]composed, assertive confidence"),
            "timid": ("[a ]timid, shy manner", "[a ]meek, unsure presence", "[a ]nervous, bashful disposition",
                      "[a ]diffident, timid attitude", "[a ]shrinking, apprehensive shyness",
                      "[a ]mousy, tentative air"),
            "outgoing": ("[an ]outgoing, sociable manner", "[a ]gregarious, extroverted presence",
                         "[a ]friendly, talkative disposition", "[an ]energetic, outgoing attitude",
                         "[a ]warm, people-loving extroversion", "[a ]chatty, sociable air"),
            "reserved": ("[a ]reserved, restrained manner", "[an ]introverted, private presence",
                         "[a ]guarded, low-key disposition", "[a ]restrained, undemonstrative attitude",
                         "[a ]withdrawn, self-contained air", "[a ]cool, reserved demeanour"),
        },
    },
    "zh": {
        "gender": {
            "male": ("男性", "男声", "男性说话人", "成年男性", "男性嗓音", "男性声音"),
            "female": ("女性", "女声", "女性说话人", "成年女性", "女性嗓音", "女性声音"),
        },
        "age": {
            "young": ("青年", "年轻成年人", "二三十岁的青年", "年轻人", "青年人，二十多岁", "年纪较轻的成年人"),
            "elderly": ("老年", "老年人", "年迈的长者", "七十岁左右的老人", "上了年纪的老人", "高龄长者"),
        },
        "pitch": {
            "low": ("偏低的{g}音高", "较低的{g}音调", "处于{g}音域低位的音高", "音高明显偏低的{g}声音",
                    "压得较低的{g}音高", "落在{g}音域下方的低音高"),
            "mid": ("中等的{g}音高", "适中的{g}音调", "处于{g}音域中段的音高", "不高不低的{g}音高",
                    "居中的{g}音高", "落在{g}音域中间的自然音高"),
            "high": ("偏高的{g}音高", "较高的{g}音调", "处于{g}音域高位的音高", "音高明显偏高的{g}声音",
                     "抬得较高的{g}音高", "落在{g}音域上方的高音高"),
        },
        "pitch_contour": {
            "steady": ("整体没有明显的升降", "整体走势平稳，不升不降", "从头到尾整体高度保持不变", "总体上既不上扬也不下沉",
                       "整句的整体音高基本持平", "整体高低始终如一"),
            "rising": ("句末逐渐上扬", "整体逐步走高", "越往后越高", "由低处起，结尾更高", "到结尾时慢慢抬升",
                       "随着句子推进不断上扬"),
            "falling": ("句末逐渐下降", "整体逐步走低", "越往后越低", "由高处起，结尾更低", "到结尾时慢慢回落",
                        "随着句子推进不断下沉"),
        },
        "speed": {
            "slow": ("缓慢、从容的语速", "偏慢的语速", "慢悠悠的说话节奏", "明显放慢的语速", "不紧不慢、偏慢的节奏",
                     "舒缓拖长的语速"),
            "moderate": ("适中的语速", "不快不慢的语速", "正常、中等的说话速度", "平常的中速节奏", "日常交谈般的中等语速",
                         "速度适中的节奏"),
            "fast": ("较快的语速", "急促的快语速", "飞快的说话速度", "明显偏快的节奏", "连珠炮般的快语速", "紧凑而快速的节奏"),
        },
        "speed_change": {
            "steady": ("全程保持一致", "始终不加快也不放慢", "从头到尾速度不变", "前后节奏统一", "整句速度稳定如一",
                       "一直维持同样的速度"),
            "speeding_up": ("越说越快", "后半段逐渐加快", "开头稍慢，结尾更快", "随着句子推进不断提速", "到结尾时明显加速",
                            "渐渐快起来"),
            "slowing_down": ("越说越慢", "后半段逐渐放慢", "开头稍快，结尾更慢", "随着句子推进不断减速", "到结尾时明显放缓",
                             "渐渐慢下来"),
        },
        "volume": {
            "soft": ("耳语般、非常轻的音量", "很小声、近乎耳语的音量", "轻声细语、像说悄悄话一样的音量", "压得很低的耳语式音量",
                     "细若耳语的极小音量", "轻到几乎听不见的耳语式音量"),
            "normal": ("正常交谈的音量", "日常对话般适中的音量", "普通说话的音量", "不大不小的交谈音量", "平常聊天时的音量",
                       "适中的对话级音量"),
            "loud": ("大喊般、非常响亮的音量", "喊叫式的高音量", "扯着嗓子喊的音量", "几乎是在吼叫的大音量", "高声叫喊的洪亮音量",
                     "放声大喊的音量"),
        },
        "volume_change": {
            "steady": ("全程保持不变", "始终不增大也不减小", "从头到尾音量一致", "前后响度稳定", "整句音量稳定如一",
                       "一直维持同样的响度"),
            "rising": ("越来越响", "后半段逐渐增大", "开头较轻，结尾更响", "随着句子推进不断加大", "到结尾时明显变响",
                       "声音渐渐放大"),
            "falling": ("越来越轻", "后半段逐渐减小", "开头较响，结尾更轻", "随着句子推进不断减弱", "到结尾时明显变轻",
                        "声音渐渐收小"),
        },
        "clarity": {
            "clear": ("吐字清晰、发音准确", "咬字清楚，每个字都很分明", "清晰利落的吐字", "发音干净清楚", "口齿伶俐、字字清楚",
                      "吐字清晰、易于听懂"),
            "mumbled": ("含混不清的吐字", "咬字含糊、嘟嘟囔囔", "发音模糊，字与字粘连在一起", "口齿不清的咕哝",
                        "含含糊糊、听不太清的发音", "吐字发糊、不够清楚"),
        },
        "fluency": {
            "fluent": ("流畅连贯，没有停顿卡壳", "说话顺畅自然", "一气呵成、毫无迟疑的表达", "连贯顺滑，没有填充词",
                       "行云流水般的流畅表达", "顺畅不打结的语流"),
            "hesitant": ("犹犹豫豫，带有停顿和“嗯”之类的填充词", "断断续续、时有卡顿和重复", "迟疑不决、吞吞吐吐",
                         "语流不连贯，夹杂停顿和语气词", "磕磕绊绊、说说停停", "带着明显迟疑和重复字词的表达"),
        },
        "texture": {
            "smooth": ("圆润顺滑的音色", "光滑细腻的嗓音质感", "柔顺平滑的声线", "顺滑干净的音色", "丝滑圆润的声音质感",
                       "平顺细致的声线"),
            "breathy": ("带气声的音色", "气息感很重的嗓音", "轻飘带气的声线", "气声明显、略显虚的音色", "气声浓重的声音质感",
                        "裹着气息的空灵声线"),
            "hoarse": ("沙哑粗糙的音色", "嘶哑的嗓音", "带颗粒感的沙哑声线", "粗粝沙哑的声音质感", "干涩嘶哑的音色",
                       "哑哑的、带毛边的声线"),
            "bright": ("明亮清脆的音色", "明亮通透的嗓音", "明亮有光泽的声线", "高亮、靠前的声音质感", "明快敞亮的音色",
                       "光亮清透的声线"),
        },
        "emotion": {
            "neutral": ("中性平和的情绪", "不带明显情绪的平静状态", "就事论事、没有感情色彩", "情绪平稳中立",
                        "客观冷静、不掺杂情绪", "不偏不倚的中性情绪"),
            "happy": ("开心愉快的情绪", "欢快喜悦的心情", "高兴雀跃的情绪", "愉悦明朗的心情", "喜气洋洋的情绪", "满心欢喜的心情"),
            "sad": ("悲伤低落的情绪", "难过忧伤的心情", "沉重哀伤的情绪", "郁郁寡欢的心情", "伤感凄凉的情绪", "失落悲戚的心情"),
            "angry": ("愤怒恼火的情绪", "生气冒火的心情", "怒气冲冲的情绪", "激愤不满的心情", "火冒三丈的情绪", "气急败坏的心情"),
        },
        "tone": {
            "expressive": ("抑扬顿挫、富有表现力的语调", "起伏很大、生动的语调", "变化丰富的语调", "语调跌宕起伏、充满表现力",
                           "高低起伏明显的生动语调", "绘声绘色、富于变化的语调"),
            "monotone": ("平板单调的语调", "几乎没有起伏的单一语调", "平铺直叙、缺乏变化的语调", "一成不变的平直语调",
                         "毫无抑扬的单调语调", "像念经一样缺少起伏的语调"),
        },
        "personality": {
            "confident": ("自信笃定的性格", "沉着自信、有底气", "果断自信的气质", "胸有成竹的自信", "从容自信、落落大方",
                          "底气十足的自信气场"),
            "timid": ("胆怯害羞的性格", "怯生生、缺乏底气", "腼腆拘谨的气质", "畏畏缩缩的胆小性格", "羞怯不安的性格",
                      "胆小怕生的气质"),
            "outgoing": ("外向健谈的性格", "开朗热情、爱交际", "活泼外向的气质", "热络随和的外向性格", "爽朗外向、喜欢和人打交道",
                         "自来熟般的外向性格"),
            "reserved": ("内敛含蓄的性格", "矜持克制的气质", "沉静内向的性格", "低调保守的个性", "含蓄寡言的性格",
                         "不事张扬的内敛气质"),
        },
    },
}

#: How a directive names the speaker, keyed by (gender or None, age or None); same pool order.
SPEAKERS: dict[str, dict[tuple[str | None, str | None], tuple[str, ...]]] = {
    "en": {
        ("male", None): ("a man", "a male speaker", "a grown man", "a male narrator", "a gentleman", "an adult man"),
        ("female", None): ("a woman", "a female speaker", "a grown woman", "a female narrator", "a lady",
                           "an adult woman"),
        (None, "young"): ("a young adult", "someone in their twenties", "a young speaker", "a youthful adult",
                          "a person in early adulthood", "someone in their early twenties"),
        (None, "elderly"): ("an elderly person", "someone in their seventies", "an elderly speaker",
                            "an older person of advanced age", "a senior citizen", "someone well into old age"),
        ("male", "young"): ("a young man", "a man in his twenties", "a young male speaker", "a youthful guy",
                            "a young gentleman", "a man in early adulthood"),
        ("female", "young"): ("a young woman", "a woman in her twenties", "a young female speaker", "a youthful lady",
                              "a young lady", "a woman in early adulthood"),
        ("male", "elderly"): ("an elderly man", "an old man", "a man in his seventies", "an elderly gentleman",
                              "a senior gentleman", "a man well into old age"),
        ("female", "elderly"): ("an elderly woman", "an old woman", "a woman in her seventies", "an elderly lady",
                                "a senior lady", "a woman well into old age"),
    },
    "zh": {
        ("male", None): ("一位男性", "一名男士", "一个成年男子", "一位男性说话人", "一位先生", "一名男性讲述者"),
        ("female", None): ("一位女性", "一名女士", "一个成年女子", "一位女性说话人", "一名成年女性", "一名女性讲述者"),
        (None, "young"): ("一位年轻人", "一个二十多岁的年轻人", "一位青年", "一名年纪轻轻的成年人", "一位刚步入社会的年轻人",
                          "一个青年人"),
        (None, "elderly"): ("一位老人", "一位七十来岁的长者", "一位上了年纪的人", "一位年迈的老人家", "一位高龄老人",
                            "一位白发苍苍的长者"),
        ("male", "young"): ("一位年轻男性", "一个二十多岁的小伙子", "一位青年男子", "一名年轻男士", "一个年轻的小伙",
                            "一位二十出头的男青年"),
        ("female", "young"): ("一位年轻女性", "一个二十多岁的姑娘", "一位青年女子", "一名年轻女士", "一个年轻的姑娘",
                              "一位二十出头的女青年"),
        ("male", "elderly"): ("一位老年男性", "一位老爷爷", "一个七十来岁的老先生", "一位年迈的老大爷", "一位白发苍苍的老先生",
                              "一位上了年纪的老汉"),
        ("female", "elderly"): ("一位老年女性", "一位老奶奶", "一个七十来岁的老太太", "一位年迈的老妇人",
                                "一位白发苍苍的老太太", "一位上了年纪的老阿姨"),
    },
}

#: The neutral accent the procedural voices cannot change (never a described value).
ACCENT = {
    "en": ("General American English", "[a ]standard General American accent", "[a ]neutral American English accent",
           "[an ]unmarked General American accent", "[a ]General American accent with no regional colouring",
           "standard North American English"),
    "zh": ("标准普通话", "标准普通话口音", "普通话，无明显地方口音", "标准的普通话发音", "规范普通话，没有方言色彩",
           "地道的标准普通话"),
}

#: DSD sentence frames: ``lead`` opens with the speaker and a list, ``speaker`` is the speaker alone,
#: ``open`` opens with a list, ``more`` carries a further list.
DSD_FRAMES = {
    "en": {
        "lead": ("Speak as {speaker}, with {items}.", "Voice this line as {speaker}, using {items}.",
                 "Read it in the voice of {speaker}, with {items}.", "Deliver this as {speaker} would, with {items}.",
                 "Perform the line as {speaker}, bringing {items}.", "Take on the voice of {speaker} and use {items}."),
        "speaker": ("Speak as {speaker}.", "Read this in the voice of {speaker}.", "Voice the line as {speaker}.",
                    "Let the line sound like it comes from {speaker}."),
        "open": ("Speak with {items}.", "Deliver the line with {items}.", "Incorporate {items} into your delivery.",
                 "Read this with {items}.", "Perform the text with {items}.", "Shape the delivery around {items}."),
        "more": ("Keep {items}.", "Also bring {items}.", "Let the delivery carry {items}.", "Add {items}.",
                 "On top of that, use {items}.", "Make sure to include {items}."),
    },
    "zh": {
        "lead": ("请以{speaker}的声音来演绎这段话，{items}。", "用{speaker}的嗓音来读这句话，{items}。",
                 "设想由{speaker}来说这段话：{items}。", "请模仿{speaker}说话，{items}。",
                 "让这段话听起来出自{speaker}之口，{items}。", "以{speaker}的口吻朗读，{items}。"),
        "speaker": ("请以{speaker}的声音来演绎这段话。", "用{speaker}的嗓音来读这句话。", "设想由{speaker}来说这段话。",
                    "让这段话听起来出自{speaker}之口。"),
        "open": ("请这样演绎这段话：{items}。", "朗读时要做到：{items}。", "说这句话时，{items}。", "整体声音表现为：{items}。",
                 "演绎这段文字时，{items}。", "请把握以下特点：{items}。"),
        "more": ("同时，{items}。", "另外，{items}。", "此外，{items}。", "还要注意：{items}。", "与此同时，{items}。",
                 "再加上{items}。"),
    },
}

#: RP sentence frames: ``role`` sets the scene, ``speaker`` states an explicit gender/age, ``items``
#: states the other explicit dimensions.
RP_FRAMES = {
    "en": {
        "role": ("Imagine you are {role}.", "Picture yourself as {role}.", "You are {role}.",
                 "Play the part of {role}.",
                 "Step into the role of {role}.", "Pretend to be {role}."),
        "speaker": ("Your voice is that of {speaker}.", "You sound like {speaker}.",
                    "Give the character the voice of {speaker}.", "Let the character be voiced by {speaker}."),
        "items": ("Speak with {items}.", "Deliver it with {items}.", "In character, use {items}.",
                  "Throughout, keep {items}."),
    },
    "zh": {
        "role": ("想象你是{role}。", "请扮演{role}。", "假设你是{role}。", "你现在是{role}。", "请代入{role}的角色。",
                 "设想自己就是{role}。"),
        "speaker": ("你的声音听起来像{speaker}。", "用{speaker}的嗓音来演。", "声音设定为{speaker}。",
                    "角色的声音属于{speaker}。"),
        "items": ("声音表现为：{items}。", "演绎时注意：{items}。", "请做到：{items}。", "整体要求：{items}。"),
    },
}

#: Role-play scenarios. ``implies``: the attribute values the role itself states (described when the
#: role is used); ``fits``: values the role merely suggests, used only to avoid jarring pairings
#: (never described). Roles at index % 3 == 2 form the test pool; each pool holds roles that imply
#: nothing, so every clip has a compatible role. No role is a child (ages are young or elderly).
ROLES: tuple[dict, ...] = (
    dict(en="an elderly storyteller sharing a funny story at a family gathering", zh="一位在家庭聚会上讲趣事的老年说书人",
         implies={"age": "elderly", "emotion": "happy"}, fits={}),
    dict(en="a news anchor reading the evening headlines", zh="一位正在播报晚间新闻的新闻主播",
         implies={"clarity": "clear", "fluency": "fluent"}, fits={"emotion": ("neutral", "happy", "sad")}),
    dict(en="an office worker leaving a voicemail for a colleague", zh="一位给同事留语音消息的上班族",
         implies={}, fits={}),
    dict(en="a nervous intern presenting to the board for the first time", zh="一位第一次向董事会汇报、紧张不安的实习生",
         implies={"fluency": "hesitant", "volume": "soft", "personality": "timid"}, fits={"age": ("young",)}),
    dict(en="a furious customer complaining at a service desk", zh="一位在服务台前怒气冲冲投诉的顾客",
         implies={"emotion": "angry", "volume": "loud"}, fits={}),
    dict(en="a grieving widower speaking at his wife's memorial", zh="一位在亡妻追悼会上致辞的悲痛丈夫",
         implies={"gender": "male", "emotion": "sad"}, fits={}),
    dict(en="a grandmother softly soothing her grandchild to sleep", zh="一位轻声哄孙子入睡的奶奶",
         implies={"gender": "female", "age": "elderly", "volume": "soft", "emotion": "neutral"}, fits={}),
    dict(en="a sports commentator calling the final seconds of a close match", zh="一位正在解说比赛最后几秒的体育解说员",
         implies={"speed": "fast", "volume": "loud", "tone": "expressive", "fluency": "fluent",
                  "personality": "outgoing"}, fits={}),
    dict(en="a young woman telling her best friend some wonderful news", zh="一位正在向闺蜜分享好消息的年轻女子",
         implies={"gender": "female", "age": "young", "emotion": "happy"}, fits={}),
    dict(en="a young father giving a toast at his daughter's graduation party", zh="一位在女儿毕业聚会上举杯致辞的年轻父亲",
         implies={"gender": "male", "age": "young", "emotion": "happy"}, fits={}),
    dict(en="a retired professor giving one more lecture", zh="一位正在讲课的退休老教授",
         implies={"age": "elderly", "clarity": "clear"}, fits={}),
    dict(en="someone reading a text message aloud to a friend", zh="一位把手机短信念给朋友听的人",
         implies={}, fits={}),
    dict(en="a worn-out night-shift worker mumbling a reply at the end of a long shift",
         zh="一位熬完夜班、疲惫地含糊应答的工人",
         implies={"clarity": "mumbled"}, fits={"speed": ("slow", "moderate"), "emotion": ("neutral", "sad")}),
    dict(en="an angry coach yelling at his team at half-time", zh="一位在中场休息时冲着球队大吼的愤怒教练",
         implies={"gender": "male", "emotion": "angry", "volume": "loud"}, fits={}),
    dict(en="a librarian quietly reminding visitors of the rules", zh="一位轻声提醒读者遵守规定的图书管理员",
         implies={"volume": "soft"}, fits={}),
    dict(en="a shy university student called on to answer a question in class",
         zh="一位在大学课堂上被点名回答问题、很害羞的大学生",
         implies={"age": "young", "fluency": "hesitant", "volume": "soft", "personality": "timid"}, fits={}),
    dict(en="a tour guide leading a group through an old town", zh="一位带游客参观古城的导游",
         implies={"clarity": "clear"}, fits={"volume": ("normal", "loud"), "emotion": ("neutral", "happy")}),
    dict(en="a traveller asking for directions at a train station", zh="一位在火车站问路的乘客",
         implies={}, fits={}),
    dict(en="a commuter making a phone call on the bus", zh="一位在公交车上打电话的通勤族",
         implies={}, fits={}),
    dict(en="an old fisherman recalling the storms of his youth", zh="一位回忆年轻时海上风暴的老渔夫",
         implies={"gender": "male", "age": "elderly"}, fits={}),
    dict(en="a radio host presenting a late-night music show", zh="一位主持深夜音乐节目的电台主持人",
         implies={"texture": "smooth", "clarity": "clear"},
         fits={"volume": ("soft", "normal"), "emotion": ("neutral", "happy")}),
    dict(en="a football fan whose voice is hoarse from an afternoon of cheering",
         zh="一位为球队呐喊了一下午、嗓子都喊哑了的球迷",
         implies={"texture": "hoarse"}, fits={}),
    dict(en="a mother calling her family to the dinner table", zh="一位招呼家人吃饭的母亲",
         implies={"gender": "female"}, fits={"volume": ("normal", "loud")}),
    dict(en="a CEO announcing record results to shareholders", zh="一位向股东宣布创纪录业绩的首席执行官",
         implies={"personality": "confident", "clarity": "clear", "fluency": "fluent"},
         fits={"emotion": ("neutral", "happy")}),
    dict(en="a witness nervously describing an accident to the police", zh="一位紧张地向警察描述事故经过的目击者",
         implies={"fluency": "hesitant"}, fits={"emotion": ("neutral", "sad")}),
    dict(en="a young man apologizing to his girlfriend after an argument", zh="一位吵架后向女朋友道歉的年轻男子",
         implies={"gender": "male", "age": "young"}, fits={"emotion": ("neutral", "sad")}),
    dict(en="an elderly woman recounting her late husband's last days", zh="一位讲述已故丈夫最后时光的老妇人",
         implies={"gender": "female", "age": "elderly", "emotion": "sad"}, fits={}),
    dict(en="a meditation teacher guiding a slow breathing exercise", zh="一位带领大家做缓慢呼吸练习的冥想老师",
         implies={"speed": "slow"}, fits={"emotion": ("neutral",), "volume": ("soft", "normal")}),
    dict(en="a motivational speaker firing up a cheering crowd", zh="一位在台上激励观众的励志演说家",
         implies={"emotion": "happy", "tone": "expressive"}, fits={}),
    dict(en="a bored clerk reading the same announcement for the hundredth time",
         zh="一位第一百次宣读同一份通知、百无聊赖的办事员",
         implies={"tone": "monotone", "emotion": "neutral"}, fits={}),
    dict(en="an elderly gentleman politely ordering at a café", zh="一位在咖啡馆礼貌点单的老先生",
         implies={"gender": "male", "age": "elderly"}, fits={}),
    dict(en="a young woman presenting her project at a job interview", zh="一位在求职面试中介绍自己项目的年轻女士",
         implies={"gender": "female", "age": "young"}, fits={}),
    dict(en="a market vendor shouting prices across a busy street", zh="一位在热闹街头高声吆喝的小贩",
         implies={"volume": "loud"}, fits={}),
    dict(en="a character in a thriller whispering a secret", zh="一位在惊悚片里压低声音透露秘密的角色",
         implies={"volume": "soft"}, fits={}),
    dict(en="someone reading a recipe aloud in the kitchen", zh="一位在厨房里把菜谱念出来的人",
         implies={}, fits={}),
    dict(en="a weather presenter reading the morning forecast", zh="一位播报早间天气预报的气象主持人",
         implies={"clarity": "clear", "fluency": "fluent"}, fits={"emotion": ("neutral", "happy")}),
)
