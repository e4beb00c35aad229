"""Rule-based extraction, for when no LLM answers: sentences of what the user said that
match a pattern of a durable fact, and what the assistant confirms it will always or
never do.

User turns are cut into sentences (``.!?`` followed by a space, ``。！？；``
and line breaks; a dot inside ``config.yaml`` or ``v1.2`` does not cut), and
each sentence is kept verbatim, identifiers and paths included, when one of
the patterns below matches it. The first matching pattern gives the fact's
category, importance and a tag naming what it is (correction, convention,
decision, preference, habit, goal, biography, project, rule, case, event,
commitment). Decisions are tried first: "we decided to use X instead of Y"
is a decision, not a taste; then corrections ("no, use X instead") and
conventions. Questions (in Chinese also without "？": ``asks``), sentences about a bare
"it" or "this" (which mean nothing out of their conversation), list bullets' markers
and the assistant's narration ("Let me check...") are left out; injected text never
reaches this stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from memctl.ingest.asks import asks_openly
from memctl.ingest.facts import Fact, Passage
from memctl.ingest.pasted import own_words
from memctl.ingest.regex_needs import fold, holds, source_needs
from memctl.lazy_re import lazy
from memctl.memories.one_off import one_off
from memctl.model import Category, Role

MIN_CHARS = 4
MAX_CHARS = 500
RULE_CONFIDENCE = 0.6
# A sentence ends at .!? before whitespace and a capital, quote, bracket or a letter of
# another script (Korean puts ". " between sentences; "e.g. x" and "config.yaml" stay
# whole), at CJK end punctuation, and at line breaks.
SENTENCE_END = lazy(
    r"(?<=[.!?])\s+(?=[A-Z\"'(\[`\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af])|(?<=[。！？；])|\n+"
)


@dataclass(frozen=True)
class Pattern:
    kind: str
    category: Category
    importance: float
    source: str
    flags: int = 0

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled on first use: a command that never tries the pattern (most of them
        import this module) does not pay for its compiling."""
        return re.compile(self.source, self.flags)


def _en(kind: str, category: Category, importance: float, regex: str) -> Pattern:
    return Pattern(kind, category, importance, regex, re.I)


def _zh(kind: str, category: Category, importance: float, regex: str) -> Pattern:
    return Pattern(kind, category, importance, regex)


P, PR, E, EV, C, PA = (
    Category.PROFILE,
    Category.PREFERENCES,
    Category.ENTITIES,
    Category.EVENTS,
    Category.CASES,
    Category.PATTERNS,
)

ENGLISH = (
    # decisions
    _en("decision", PA, 0.7, r"\b(?:I|we) (?:have )?(?:decided|chose|agreed|settled) (?:to|on)\b"),
    _en("decision", PA, 0.7, r"\blet's (?:go with|use|stick with|switch to)\b"),
    _en("decision", PA, 0.7, r"\bwe(?:'re| are) (?:switching|moving|migrating) (?:to|from)\b"),
    # ... and done: "we switched from Poetry to uv" (a team's tool changed; s24-walk)
    _en(
        "decision",
        PA,
        0.7,
        r"\bwe(?:'ve| have)? (?:just )?(?:switched|migrated) (?:over )?(?:to|from)\b",
    ),
    _en("decision", PA, 0.7, r"\b(?:from now on|going forward|in the future),?"),
    _en(
        "decision",
        PA,
        0.7,
        r"\bwe (?:should|would want to|need to|will) (?:continue|keep|use|support|include|add|"
        r"create|move|switch|stick|go|drop|remove|replace|migrate|store|export|adopt)\b",
    ),
    # corrections: the user sets the assistant right ("no, use X instead")
    _en(
        "correction",
        PA,
        0.8,
        r"^\W*(?:no|nope|actually|wait)\b[,.!]?\s+(?:\w+\s+){0,3}?"
        r"(?:use|do|put|call|name|run|keep|make|it's|it is|we use)\b",
    ),
    _en("correction", PA, 0.8, r"\b(?:don't|do not|never) use [\w`./+#-]+[,;]? (?:use|but)\b"),
    _en("correction", PA, 0.8, r"\buse [\w`./+#-]+ instead(?: of\b|\W*$)"),
    _en("correction", PA, 0.8, r"\binstead of [\w`./+#-]+,? use\b"),
    # conventions the user states
    _en(
        "convention",
        PA,
        0.8,
        r"\b(?:we|you) (?:always|never|must|should always|should never) (?:use|write|run|"
        r"put|name|keep|call|add|prefix|commit|format|test)\b",
    ),
    _en(
        "convention",
        PA,
        0.8,
        r"\b(?:our|the|this project's) (?:convention|rule|style) (?:is|for)\b",
    ),
    _en("convention", PA, 0.8, r"\bmake sure (?:to|that) (?:always|you always|we always)\b"),
    # preferences
    _en("preference", PR, 0.7, r"\bI(?: really| much| strongly)? (?:prefer|like|love|enjoy)\b"),
    _en("preference", PR, 0.7, r"\bI (?:don't|do not|never) (?:like|want|enjoy|use)\b"),
    _en("preference", PR, 0.7, r"\bI (?:hate|dislike|can't stand|cannot stand)\b"),
    _en("preference", PR, 0.7, r"\bmy (?:favou?rite|preferred)\b"),
    _en("preference", PR, 0.7, r"\bI(?:'d| would) rather\b"),
    _en("preference", PR, 0.7, r"\b(?:prefer|use) [\w.+#/-]+ (?:over|instead of|rather than)\b"),
    # the user's own setup, a durable fact of theirs: "My editor is vim", "I use fish." (the
    # whole sentence, so "I use this helper to parse it" is no setup); what the thing is
    # like or doing ("my laptop is like half my lifeline", LoCoMo conv-42) is no setup
    _en(
        "preference",
        PR,
        0.7,
        r"\bmy (?:[\w-]+ )?(?:editor|ide|shell|terminal|os|operating system|distro|browser|"
        r"keyboard(?: layout)?|font|theme|colou?r ?scheme|laptop|machine|computer|"
        r"window manager|package manager|version manager|multiplexer|prompt) (?:is|are)\b"
        r"(?! (?:like|so|too|very|really|kind of|sort of|still|not|being|getting|acting)\b)",
    ),
    _en(
        "preference",
        PR,
        0.7,
        r"^\W*I(?: mainly| mostly| now| usually)? use `?[\w.+#/-]+`?"
        r"(?: (?:as my|for(?: my)?) [\w -]{1,40})?\W*$",
    ),
    # habits
    _en("habit", PA, 0.6, r"\bI (?:usually|always|normally|typically|often|generally)\b"),
    _en("habit", PA, 0.6, r"\bevery (?:day|morning|evening|night|week|month|time I)\b"),
    _en("habit", PA, 0.6, r"\bI tend to\b"),
    _en("habit", PA, 0.6, r"\bmy (?:workflow|routine|habit|setup)\b"),
    # goals
    _en("goal", P, 0.6, r"\bI (?:want|plan|hope|intend|aim) to (?!know\b|see\b|ask\b)"),
    _en("goal", P, 0.6, r"\b(?:my|our) (?:goal|aim|plan|objective) (?:is|was)\b"),
    _en("goal", P, 0.6, r"\bI'm (?:trying|planning|learning|working) (?:to|on)\b"),
    # biography
    _en("biography", P, 0.8, r"\b(?:my name is|call me|I'm called)\b"),
    _en("biography", P, 0.8, r"\bI (?:work|worked) (?:as|at|for|in)\b"),
    _en("biography", P, 0.8, r"\bI(?: currently)? (?:live|am based|'m based) in\b|\bI'm from\b"),
    _en("biography", P, 0.8, r"\bmy (?:job|role|title|team|company|employer|manager)\b"),
    _en(
        "biography",
        P,
        0.8,
        r"\bI(?:'m| am) an? (?:\w+ )?(?:developer|engineer|designer|"
        r"student|manager|scientist|researcher|admin|architect|teacher|writer)\b",
    ),
    _en("biography", P, 0.8, r"\bI(?: have|'ve) (?:\d+|many|several) years of\b"),
    _en("biography", P, 0.8, r"\bI speak\b|\bmy (?:native|first) language\b"),
    # how the team does a task, with what: "we deploy with make release from main", "we run
    # the migrations with alembic" (a procedure, tried before the project fact "we use uv" /
    # "we host on fly.io" below, which took it: two README walks, s30-remember)
    _en(
        "procedure",
        PA,
        0.7,
        r"\bwe (?:deploy|build|release|ship|publish|test|run|lint|format|migrate|back up|"
        r"provision|package|bump|tag|roll back)\b(?! (?:into|out|across|over)\b)"
        r"[^.;!?\n]{0,40}?\b(?:with|using|via|through|by)\s+[`\w./-]",
    ),
    # project facts
    _en(
        "project",
        E,
        0.7,
        r"\b(?:our|the|this) (?:[\w-]+ )?(?:project|repo|repository|app|service|codebase|"
        r"api|backend|frontend|site) (?:uses|is built (?:with|on)|runs on|depends on|"
        r"is written in|lives in|is deployed)\b",
    ),
    _en(
        "project",
        E,
        0.7,
        r"\bwe (?:use|deploy|build|host|run|test|ship|release) "
        r"(?:with |on |using |via |to )?[\w`./-]",
    ),
    _en(
        "project",
        E,
        0.7,
        r"\b(?:the )?(?:database|db|server|config|build|ci|tests?|logs?|cache|"
        r"docs) (?:is|are|lives?|runs?|goes|go) (?:at|in|on|under)\b",
    ),
    _en(
        "project",
        E,
        0.7,
        r"\b(?:the|our) (?:[\w-]+ )?(?:port|url|endpoint|host|branch|bucket|ttl|timeout|"
        r"limit|version|region) (?:is|are|for)\b",
    ),
    _en("project", E, 0.7, r"\b(?:has |was |were )?(?:moved|renamed|relocated) to\b"),
    # what a thing of the project is called and where it lives: "our staging database is called
    # pelican-stage", "the deploy key lives in 1Password"; a call of code ("the hook is called
    # twice") is no name, and a place that names nothing ("is stored on a server") no fact
    _en(
        "project",
        E,
        0.7,
        r"\b(?:our|the|this|my) (?:[\w-]+ ){1,3}?(?:is|are) (?:called|named|known as)\s"
        r"(?!(?:once|twice|again|only|when|whenever|if|by|from|in|inside|on|at|after|before|"
        r"during|every|each|for|with|multiple|several|many|repeatedly|directly|the|a|an|"
        r"\w+ times)\b)[`\"']?[\w@./:-]",
    ),
    _en(
        "project",
        E,
        0.7,
        r"\b(?:our|the|this|my) (?:[\w-]+ ){1,3}?(?:lives?|(?:is|are) "
        r"(?:hosted|located|kept|stored))\s(?:at|in|on|under) "
        r"[`\"']?(?:[~/.$]|\w+://|\w*[\d./:@]|(?-i:[A-Z]))",
    ),
    # when something runs: "the nightly restore job runs at 03:30 UTC", "backups run every 6
    # hours", "the report goes out on Mondays" (not "a run on Sundays")
    _en(
        "project",
        E,
        0.7,
        r"(?<!\ba )(?<!\bthe )(?<!\bmy )\b(?:runs?|fires|happens|kicks off|goes out|is scheduled|"
        r"are scheduled)\b(?: [a-z]+ly)?\s(?:at (?:\d{1,2}(?::\d{2}|\s*(?:am|pm|a\.m\.|p\.m\.|"
        r"o'clock|utc))|midnight|noon)|"
        r"(?:every|each|once an?|twice an?) (?:\d+ )?(?:minute|hour|day|night|week|month|"
        r"morning|evening|weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday|"
        r"sunday)s?\b|(?:daily|nightly|weekly|hourly|monthly)\b|on (?:mondays|tuesdays|"
        r"wednesdays|thursdays|fridays|saturdays|sundays|weekdays|weekends)\b)",
    ),
    # rules to follow
    _en("rule", PA, 0.8, r"\bremember (?:that|to)\b"),
    _en("rule", PA, 0.8, r"\b(?:must not|mustn't|must never|should never)\b"),
    _en("rule", PA, 0.8, r"\b(?:it's |it is )?important (?:not )?to\b|\bkeep in mind that\b"),
    _en(
        "rule",
        PA,
        0.8,
        r"^\W*(?:don't|do not|never) \w+\b.{0,60}?[,;]\s*(?:\w+ ){0,4}?(?:first|instead)\b",
    ),
    _en("rule", PA, 0.8, r"\b(?:don't|do not|never) \w+ .{0,60}?\buntil\b"),
    _en(
        "rule",
        PA,
        0.8,
        r"\b(?:always|never|don't|do not) (?:commit|push|deploy|merge|delete|"
        r"touch|edit|run|use|add|write)\b",
    ),
    _en("rule", PA, 0.7, r"\b(?:is|are) deprecated\b|\bno longer (?:use|used)\b"),
    # constraints a request sets: a limit, a scope kept small, what not to do
    _en(
        "rule",
        PA,
        0.8,
        r"\b(?:max(?:imum)?|at most|no (?:more|longer) than|not (?:more|longer) than|under|"
        r"less than|within)\s+\d+\s*-?\s*(?:min(?:ute)?s?|sec(?:ond)?s?|h(?:ours?)?|lines?|"
        r"words?|pages?|slides?|char(?:acter)?s?|[km]b|ms|files?|steps?|items?|tokens?)\b",
    ),
    _en(
        "rule",
        PA,
        0.8,
        r"\bkeep (?:it|things|this|the \w+) (?:minimal|simple|short|small|lean|focused)\b|"
        r"\b(?:minimal|minimum) (?:features?|changes?|scope|version|implementation)\b|"
        r"\bbare minimum\b|\bnothing (?:else|more|fancy)\b",
    ),
    _en(
        "rule",
        PA,
        0.8,
        r"^\W*(?:please\s+)?(?:do not|don't|never|avoid)\s+(?:add|create|change|modify|install|"
        r"include|introduce|refactor|rename|remove|produce|generate|implement|mock|hardcode|"
        r"hard-code|use)\b",
    ),
    _en(
        "rule",
        PA,
        0.8,
        r"^\W*(?:please\s+)?(?:only|just) (?:use|change|touch|modify|edit|implement|support|"
        r"target|focus on|scan|read|keep)\b",
    ),
    _en(
        "rule",
        PA,
        0.7,
        r"^\W*(?:the |our |this )?[\w`./-]+(?: [\w`./-]+){0,3} (?:must|has to|needs to) "
        r"(?:be|use|run|work|support|stay|include|pass|keep|handle)\b",
    ),
    # cases and events
    _en(
        "case", C, 0.7, r"\b(?:the|that) (?:fix|solution|workaround|cause|root cause) (?:was|is)\b"
    ),
    _en("case", C, 0.7, r"\b(?:fixed|solved|resolved|worked around)\b.{3,80}?\bby\b"),
    _en(
        "command",
        PA,
        0.7,
        r"^\W*(?:run|build|test|lint|format|deploy|install)\s+\S.{0,40}?\s(?:with|using|via)\s+"
        r"`?[\w.-]+",
    ),
    _en(
        "case",
        C,
        0.7,
        r"\b(?:it|this|that) (?:broke|fails|failed|crashed|crashes) "
        r"(?:because|when|if)\b",
    ),
    # a failure and its cause, whatever failed ("The staging deploy failed this morning
    # because REDIS_URL pointed at port 6380; …": the rules kept nothing of it, s27-walk)
    _en("case", C, 0.7, r"\b(?:broke|fails|failed|crashed|crashes)\b[^.;?!\n]{0,40}?\bbecause\b"),
    _en(
        "event",
        EV,
        0.5,
        r"\b(?:I|we) (?:just )?(?:released|shipped|launched|migrated|upgraded|"
        r"started|finished|moved|joined|left)\b",
    ),
    _en(
        "project",
        E,
        0.7,
        r"\b(?:python|node|go|rust|java|ruby|php|postgres(?:ql)?|mysql|redis|django|"
        r"fastapi|flask|react|next\.js|vue|typescript)(?:\s*v|\s+)\d+(?:\.\d+)*\b|"
        # the version glued to the name only with its dot: "python3.12" is a version,
        # "python3" the program's name ("python3 top.py": a command, s29-walk)
        r"\b(?:python|node|ruby|php)\d+\.\d+(?:\.\d+)*\b",
    ),
    # the language a kind of text is written in: "commit messages in English"
    _en(
        "rule",
        PA,
        0.8,
        r"\b(?:commit messages?|comments?|documentation|variable names|identifiers)\b"
        r"[^.?!]{0,30}?\bin (?:English|Chinese|Japanese|Korean)\b",
    ),
)

# What the assistant confirms it will always / never do: a rule the user set, acknowledged.
COMMITMENTS = (
    _en(
        "commitment",
        PA,
        0.7,
        r"\bI(?:'ll| will)(?: now)? (?:always|never|no longer|from now on|make sure to always)\b",
    ),
    _en("commitment", PA, 0.7, r"\bI won't (?:\w+ ){0,3}(?:again|anymore|any more)\b"),
    _en("commitment", PA, 0.7, r"\b(?:from now on|going forward),? I(?:'ll| will)\b"),
    _zh(
        "commitment",
        PA,
        0.7,
        r"我(?:以后|今后|之后)?(?:会|将)?(?:一直|总是|始终|永远不|不再|再也不)",
    ),
    _zh("commitment", PA, 0.7, r"(?:以后|今后|之后)我(?:会|将|都会)"),
)

CHINESE = (
    _zh("correction", PA, 0.8, r"^\W*(?:不对|不是|错了|不要)[，,。]?.{0,20}?(?:用|改用|换成|应该)"),
    _zh("correction", PA, 0.8, r"(?:不要|别|不用)(?:再)?用.{1,20}?[，,；;]\s*(?:改用|用|换成)"),
    _zh("correction", PA, 0.8, r"(?:改用|换成|改成)"),
    _zh("convention", PA, 0.8, r"(?:统一|一律|必须|务必|始终|总是)(?:用|使用|采用|写|放在|遵循)"),
    _zh("convention", PA, 0.8, r"(?:规范|约定|惯例)(?:是|为)"),
    _zh(
        "decision",
        PA,
        0.7,
        r"(?:最终|最后)?(?:方案|设计|决定)(?:是|为|：|:)|采用.{1,30}(?:方案|架构|设计)",
    ),
    _zh("decision", PA, 0.7, r"(?:就用|选用|采用)"),
    _zh(
        "project",
        E,
        0.7,
        r"(?:技术栈|框架|数据库|版本|端口|命令|目录|路径)(?:是|为|用|：|:)",
    ),
    _zh("preference", PR, 0.7, r"我(?:很|非常|更|比较|最)?(?:喜欢|爱|偏好|偏爱)"),
    _zh("preference", PR, 0.7, r"我(?:不|不太|不怎么)喜欢|我讨厌|我受不了"),
    _zh("preference", PR, 0.7, r"我(?:更)?倾向于|我宁愿"),
    _zh("habit", PA, 0.6, r"我(?:通常|一般|总是|经常|习惯)"),
    _zh("habit", PA, 0.6, r"每(?:天|周|个月|次|个早上)"),
    _zh("goal", P, 0.6, r"我(?:想要|打算|计划|希望|准备)(?!你|您)|我的目标"),  # not "我希望你…"
    _zh("decision", PA, 0.7, r"(?:我|我们)(?:决定|选择了|定了)|以后(?:都|就)"),
    _zh("biography", P, 0.8, r"我叫|我的名字(?:是|叫)"),
    _zh("biography", P, 0.8, r"我(?:住在|来自)|我在\S{1,12}(?:工作|上班|上学)"),
    _zh("biography", P, 0.8, r"我是(?:一名|一个)?\S{0,6}(?:工程师|开发者|程序员|设计师|学生|经理)"),
    _zh("project", E, 0.7, r"(?:项目|仓库|代码库|服务|系统)(?:使用|用的是|基于|依赖|部署在)"),
    _zh("project", E, 0.7, r"我们(?:用|使用|部署|构建)"),
    _zh("rule", PA, 0.8, r"记住|(?:千万|永远)?不要|别(?:再)?(?:提交|推送|删除|修改)"),
    _zh("rule", PA, 0.8, r"(?:都|一律|统一|全部)(?:用|使用|改成|写成)|应该(?:用|使用|是|放)"),
    _zh("rule", PA, 0.8, r"(?:以后|之后|今后)(?:都|请|要)|不能(?:用|提交|修改|删除)"),
    _zh("case", C, 0.7, r"(?:问题|原因|解决(?:方法|办法|方案))(?:是|在于)"),
    _zh("rule", PA, 0.8, r"(?:只|仅)(?:能|需要|要|用|做|扫描|保留|实现|修改|支持|读取|检查)"),
    _zh(
        "rule",
        PA,
        0.8,
        r"(?:最多|不超过|至多|最少|至少)\s*\d+|\d+\s*(?:分钟|秒|行|个字)\s*(?:以内|之内)",
    ),
    _zh("rule", PA, 0.8, r"(?:禁止|不得|请勿|一定要|务必|避免)"),
    _zh("rule", PA, 0.8, r"最小(?:化|功能|实现|改动)|(?:尽量|保持)简单"),
    # the language a kind of text is written in: "提交信息用中文写", "注释用英文"
    _zh(
        "rule",
        PA,
        0.8,
        r"(?:提交信息|注释|文档|变量名|日志)\S{0,4}(?:用|使用)(?:中文|英文|英语|日文|韩文)",
    ),
)

KOREAN = (
    _zh(
        "decision",
        PA,
        0.7,
        r"(?:로|으로)\s*(?:하자|합시다|가자|갑시다)|(?:하기로|쓰기로|사용하기로)\s*(?:했|하자|결정)",
    ),
    _zh("rule", PA, 0.8, r"(?:반드시|절대(?:로)?|무조건|항상)\s*\S"),
    _zh(
        "rule",
        PA,
        0.8,
        r"(?:하지|쓰지|넣지|만들지|건드리지|수정하지|추가하지|사용하지|바꾸지|지우지)\s*(?:마|말|않도록)",
    ),
    _zh(
        "rule",
        PA,
        0.8,
        r"최소한|최소\s*(?:기능|범위|구현)|최대\s*\d+|\d+\s*(?:분|초|줄|자)\s*(?:이내|이하|까지)",
    ),
    _zh("rule", PA, 0.8, r"\S+만\s*(?:구현|만들|사용|써|쓰|해|하|넣|추가|유지|남기|스캔|검사)"),
    _zh("preference", PR, 0.7, r"(?:저는|나는|전)\s*\S*(?:선호|좋아)"),
)
JAPANESE = (
    _zh(
        "decision",
        PA,
        0.7,
        r"(?:にしましょう|で行きましょう|でいきましょう|ことにしました|に決めました)",
    ),
    _zh("rule", PA, 0.8, r"(?:必ず|絶対に?|常に|禁止|厳禁)"),
    _zh(
        "rule",
        PA,
        0.8,
        r"(?:しないで|使わないで|入れないで|触らないで|変更しないで|追加しないで|作らないで|書かないで)",
    ),
    _zh("rule", PA, 0.8, r"最小限|最大\s*\d+|\d+\s*(?:分|秒|行|文字)\s*(?:以内|以下|まで)"),
    _zh("rule", PA, 0.8, r"だけ(?:を|に|で)?\s*(?:して|使|実装|作|残|スキャン|読)"),
    _zh("preference", PR, 0.7, r"(?:私は|僕は)\S*(?:好き|好み)"),
)

PATTERNS = ENGLISH + CHINESE + KOREAN + JAPANESE
HAN = lazy(r"[\u3400-\u4dbf\u4e00-\u9fff]")
KANA = lazy(r"[\u3040-\u30ff]")
HANGUL = lazy(r"[\uac00-\ud7af]")
# a sentence that asserts a rule even when it ends in a question mark ("we should run it on
# every push?", "注释用中文，提交信息用英文，可以吗？")
ASSERTIVE = lazy(
    r"\bI think we should\b|\bwe (?:must|should always)\b|必须|不要|应该|统一|一律|반드시|必ず"
)
# question-like sentences are asks, not facts
QUESTION = lazy(
    r"[?？]\s*$|^\W*(?:what|why|how|where|when|which|who|can|could|would|"
    r"should|is|are|do|does)\b.*[?？]",
    re.I,
)
# a sentence whose subject or object is a bare pronoun ("I plan to enhance it with more
# features"): out of its conversation nobody knows what "it" was, so it is no memory
DANGLING = lazy(
    r"^\W*(?:it|this|that|they|these|those)\b(?!\s+(?:project|repo|app|service|file))|"
    r"\b(?:to|will|'ll|should|can|must)\s+\w+\s+(?:it|them)\b",
    re.I,
)
BULLET = lazy(r"^\s*(?:[-*•]|\d+[.)])\s+")
# The instruction to the assistant a fact may open with ("Remember that the bucket is ...",
# "FYI: ...", "Keep in mind that ..."): the stored fact is what follows. "Remember to run
# X" keeps its words: without them it would be an order, not a fact.
LEAD_IN = lazy(
    r"^\W*(?:please\s+)?(?:(?:remember|note|keep in mind|bear in mind|don't forget|do not forget|"
    r"be aware|just so you know)\s+that\b|fyi\b|just so you know\b|for your information\b|"
    r"(?:please\s+)?(?:note|remember|note (?:for later|to self)|for the record)\s*:)[\s,:-]*",
    re.I,
)
# Asked in so many words to keep it ("Remember: the release train leaves every second
# Thursday", "Note for later: staging listens on port 5433"): the user's own choice of a
# fact, kept when no pattern knows its words (a walk's two sessions lost theirs), as
# ``classify`` files a text no pattern knows: a fact about the project. Not a bare
# "Note:", nor one after a comment's or a list's marks: code and docs pasted in a user
# turn are full of those (102 in the real transcripts, none a request)
ASKED_SOURCE = r"^(?:please\s+)?(?:remember|note (?:for later|to self)|for the record)\s*:"
ASKED_TO_KEEP = lazy(ASKED_SOURCE, re.I)
KEPT_AS_ASKED = Pattern("project", Category.ENTITIES, 0.7, ASKED_SOURCE, re.I)
# The categories a rule, a convention, a decision or a taste is filed in (maintain/profile.py
# offers them as the user's conventions at every session start).
STANDING_CATEGORIES = (Category.PATTERNS, Category.PREFERENCES)
# What one of them becomes when it is a one-off instruction about the task at hand
# (``memories.one_off``): a record of its session (an event, at an event's importance), kept
# and searchable, not a convention offered at every session start.
ONE_OFF = Pattern("instruction", Category.EVENTS, 0.5, r"")
# assistant sentences that are only a tool note, or narrate the next step
NARRATION = lazy(
    r"^\s*(?:\[tool\b|let me\b|now (?:let me|I'll)\b|I'll (?:start|now|first)\b)", re.I
)
# A command line typed as a line of its own, after a prompt sign or a label ("$ make ship",
# "RUN: ~/.venv/bin/memctl recall --json ... | python3 top.py"): a command to run, no fact
# (the s29-walk's prompt lines were kept as project facts: "python3" read as a version)
TYPED_COMMAND = lazy(
    r"^\s*(?:[$%]|[A-Z]{2,}:)\s*(?:[~./]\S*|\w[\w.-]*/\S*|[\w.-]+(?:\s+[\w.:-]+)?\s+(?:-|\||&&))"
)
# A sentence that ends in a colon introduces what follows it (a list, a paste, a code
# block): cut from it, it is half a sentence ("The refactoring broke some functionality
# because:"; 3 of the 121 facts of the studied sessions, s30-distill)
INTRODUCES = lazy(r"[:：]\s*$")


def without_lead_in(sentence: str) -> str:
    """``sentence`` without a leading instruction to the assistant (``LEAD_IN``), its first
    letter raised; the sentence as it is when nothing (or nothing after it) is left."""
    rest = LEAD_IN.sub("", sentence, count=1)
    if rest == sentence or len(rest) < MIN_CHARS:
        return sentence
    return rest[0].upper() + rest[1:]


def asked_to_keep(sentence: str, stated: str) -> bool:
    """The user asked to keep this sentence (``ASKED_TO_KEEP``), and what follows the ask
    says something of its own (not "it" or "this")."""
    return (
        stated != sentence and bool(ASKED_TO_KEEP.match(sentence)) and not DANGLING.search(stated)
    )


def sentences(text: str) -> list[str]:
    """The sentences of a text, trimmed, in order."""
    return [s.strip() for s in SENTENCE_END.split(text) if s and s.strip()]


class Scripts(NamedTuple):
    """The user patterns of each script."""

    english: tuple[Pattern, ...]
    chinese: tuple[Pattern, ...]
    japanese: tuple[Pattern, ...]
    korean: tuple[Pattern, ...]


EVERY_SCRIPT = Scripts(ENGLISH, CHINESE, JAPANESE, KOREAN)


def live(patterns: tuple[Pattern, ...], text: str) -> tuple[Pattern, ...]:
    """The patterns that can match somewhere in ``text``: each needs one of a few literal
    strings (``regex_needs``), so a long message is tested once a pattern, not a sentence
    at a time (a 400-message session of 6,000-character messages: 2.4 MB)."""
    folded = fold(text)
    return tuple(p for p in patterns if holds(source_needs(p.source, p.flags), folded))


def _candidates(passage: Passage) -> list[tuple[str, tuple[Pattern, ...]]]:
    """(sentence, the patterns that may match it) for one passage: every pattern for what
    the user said, only commitments for what the assistant said; of a turn the user
    pasted, only the words they wrote above the paste (a manual's "Format JSON output
    using a Go template" is no rule of theirs)."""
    if passage.role not in (Role.USER, Role.ASSISTANT):
        return []
    text = own_words(passage.text) if passage.pasted else passage.text
    kept = []
    for raw in sentences(text):
        sentence = BULLET.sub("", raw).strip()
        if not MIN_CHARS <= len(sentence) <= MAX_CHARS or NARRATION.match(sentence):
            continue
        if TYPED_COMMAND.match(sentence) or INTRODUCES.search(sentence):
            continue
        asks = QUESTION.search(sentence) and not ASSERTIVE.search(sentence)
        if not (asks or asks_openly(sentence) or DANGLING.search(sentence)):
            kept.append(sentence)
    if not kept:
        return []
    if passage.role == Role.ASSISTANT:
        commitments = live(COMMITMENTS, text)
        return [(s, commitments) for s in kept] if commitments else []
    scripts = Scripts(*(live(script, text) for script in EVERY_SCRIPT))
    found = [(s, patterns_for(s, scripts)) for s in kept]
    return [(s, patterns) for s, patterns in found if patterns]


def patterns_for(sentence: str, scripts: Scripts = EVERY_SCRIPT) -> tuple[Pattern, ...]:
    """The patterns worth trying on ``sentence``: the English ones, and those of each CJK
    script it holds (an English sentence tries 55, not all 95)."""
    if sentence.isascii():
        return scripts.english
    found: tuple[Pattern, ...] = scripts.english
    if HAN.search(sentence):
        found += scripts.chinese
    if KANA.search(sentence):
        found += scripts.japanese
    if HANGUL.search(sentence):
        found += scripts.korean
    return found


def match(sentence: str, patterns: tuple[Pattern, ...] = PATTERNS) -> Pattern | None:
    """The first of ``patterns`` the sentence matches (of all the user patterns, only
    those of the scripts it is written in)."""
    if patterns is PATTERNS:
        patterns = patterns_for(sentence)
    return next((p for p in patterns if p.regex.search(sentence)), None)


MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# What a text stored as it is says in words a conversation's sentence does not pin down
# well enough to be kept on its own (the extraction never tries these: a chat is full of
# "we went with" and dates told in passing), tried when no pattern above knows the text
# (s30-remember: "we chose Postgres over MySQL because of JSONB" and "on March 3 the DB
# went down" were filed as project facts)
STATED = (
    # a choice made: "we chose X over Y because", "we went with SQLite", "Decided: use Redis"
    _en(
        "decision",
        PA,
        0.7,
        r"\b(?:I|we) (?:have |had )?(?:chose|picked(?! up\b)|selected|opted for|went with|"
        r"settled on|ended up (?:using|with))\b|^\W*(?:decided|decision)\s*[:-]",
    ),
    # how a task is done, said as an instruction: "To deploy, run make release from main"
    _en("procedure", PA, 0.7, r"^\W*to \w+(?: [\w-]+){0,3},\s*(?:run|use|call|type)\b"),
    # an imperative taste: "prefer small PRs"
    _en("preference", PR, 0.7, r"^\W*(?:always\s+)?prefer\b"),
    # a dated happening, told in the past: "on March 3 the DB went down", "the outage on
    # 2026-03-03 was caused by a full disk" (a date ahead, "the cert expires on May 1", is a
    # fact of the project)
    _en(
        "event",
        EV,
        0.5,
        rf"^(?=.*\b(?:{MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)? {MONTH}\b|"
        rf"\d{{4}}-\d{{2}}-\d{{2}}\b|yesterday\b|last (?:night|week|month|year|{WEEKDAY})\b|"
        rf"on {WEEKDAY}\b))"
        r"(?=.*\b(?:was|were|went|had|got|did|lost|broke|ran|hit|took|\w{3,}ed)\b)",
    ),
)


def classify(text: str) -> Category:
    """The category the rules give a text stored as it is (``remember``, ``memory_store``):
    its first sentence a pattern matches decides, then its first a ``STATED`` pattern
    matches; a text none knows is a fact about the project (entities), not a preference."""
    said = [BULLET.sub("", raw).strip() for raw in sentences(text)]
    for patterns in (PATTERNS, STATED):
        for sentence in said:
            pattern = match(sentence, patterns)
            if pattern is not None:
                return pattern.category
    return Category.ENTITIES


def extract_rules(passages: list[Passage], max_facts: int) -> list[Fact]:
    """Facts from the user's sentences that match a pattern, and the assistant's
    commitments (what it confirms it will always or never do), at most ``max_facts``."""
    facts: list[Fact] = []
    for passage in passages:
        for sentence, patterns in _candidates(passage):
            stated = without_lead_in(sentence)
            # what is left says what it is ("the staging bucket is ...": a project fact);
            # else the instruction's own pattern ("remember that": a rule) keeps it
            pattern = (match(stated, patterns) if stated != sentence else None) or match(
                sentence, patterns
            )
            if pattern is None and asked_to_keep(sentence, stated):
                pattern = KEPT_AS_ASKED
            if pattern is None:
                continue
            if pattern.category in STANDING_CATEGORIES and one_off(sentence):
                pattern = ONE_OFF
            facts.append(
                Fact(
                    content=stated,
                    category=pattern.category,
                    tags=[pattern.kind],
                    importance=pattern.importance,
                    confidence=RULE_CONFIDENCE,
                    source=passage.source,
                    created_at=passage.created_at,
                )
            )
            if len(facts) >= max_facts:
                return facts
    return facts
