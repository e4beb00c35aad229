"""The English rules of what the user says: decisions, corrections, conventions,
preferences, habits, goals, biography, procedures, project facts, rules, cases and events,
tried in this order (the first that matches a sentence gives its kind)."""

from __future__ import annotations

from memctl.ingest.rule_pattern import EV, PA, PR, C, E, P, en

ENGLISH = (
    # decisions
    en("decision", PA, 0.7, r"\b(?:I|we) (?:have )?(?:decided|chose|agreed|settled) (?:to|on)\b"),
    en("decision", PA, 0.7, r"\blet's (?:go with|use|stick with|switch to)\b"),
    # what not to do, agreed: "Let's NOT run the CI if the only change is to *.md files"
    # (fresh4's getspecstory; s32-distill), and the value wanted: "we want the flag to be
    # `--local-time-zone`" (fresh3's getspecstory)
    en(
        "decision",
        PA,
        0.7,
        r"\blet's not (?:run|use|add|include|support|change|touch|deploy|push|commit|merge|ship|"
        r"store|create|remove|rename|build|publish|release|install|upgrade|expose|track|rely)\b",
    ),
    en("decision", PA, 0.7, r"\bwe want (?:the|our) [\w`.-]+(?: [\w`.-]+){0,2} to be\b"),
    # a value set, agreed: "let's update the default context compaction to 90 in env var"
    # (the shared codemie Codex session; s35-distill), "Let's update the version everywhere
    # to 1.25.6", "Let's change the package … from pkg/providers/gemini to …/geminicli";
    # "let's update the tests to match" and "let's move on to step 2" set no value
    en(
        "decision",
        PA,
        0.7,
        r"\blet's (?:update|change|set|bump|rename|move|raise|lower|increase|decrease) \S.{0,80}?"
        r"\b(?:from \S.{0,60}? to \S|to v?\d)",
    ),
    en("decision", PA, 0.7, r"\bwe(?:'re| are) (?:switching|moving|migrating) (?:to|from)\b"),
    # ... and done: "we switched from Poetry to uv" (a team's tool changed; s24-walk)
    en(
        "decision",
        PA,
        0.7,
        r"\bwe(?:'ve| have)? (?:just )?(?:switched|migrated) (?:over )?(?:to|from)\b",
    ),
    en("decision", PA, 0.7, r"\b(?:from now on|going forward|in the future),?"),
    en(
        "decision",
        PA,
        0.7,
        r"\bwe (?:should|would want to|need to|will) (?:continue|keep|use|support|include|add|"
        r"create|move|switch|stick|go|drop|remove|replace|migrate|store|export|adopt)\b",
    ),
    # corrections: the user sets the assistant right ("no, use X instead")
    en(
        "correction",
        PA,
        0.8,
        r"^\W*(?:no|nope|actually|wait)\b[,.!]?\s+(?:\w+\s+){0,3}?"
        r"(?:use|do|put|call|name|run|keep|make|it's|it is|we use)\b",
    ),
    en("correction", PA, 0.8, r"\b(?:don't|do not|never) use [\w`./+#-]+[,;]? (?:use|but)\b"),
    en("correction", PA, 0.8, r"\buse [\w`./+#-]+ instead(?: of\b|\W*$)"),
    en("correction", PA, 0.8, r"\binstead of [\w`./+#-]+,? use\b"),
    # conventions the user states
    en(
        "convention",
        PA,
        0.8,
        r"\b(?:we|you) (?:always|never|must|should always|should never) (?:use|write|run|"
        r"put|name|keep|call|add|prefix|commit|format|test)\b",
    ),
    en(
        "convention",
        PA,
        0.8,
        r"\b(?:our|the|this project's) (?:convention|rule|style) (?:is|for)\b",
    ),
    en("convention", PA, 0.8, r"\bmake sure (?:to|that) (?:always|you always|we always)\b"),
    # preferences
    en("preference", PR, 0.7, r"\bI(?: really| much| strongly)? (?:prefer|like|love|enjoy)\b"),
    en("preference", PR, 0.7, r"\bI (?:don't|do not|never) (?:like|want|enjoy|use)\b"),
    en("preference", PR, 0.7, r"\bI (?:hate|dislike|can't stand|cannot stand)\b"),
    en("preference", PR, 0.7, r"\bmy (?:favou?rite|preferred)\b"),
    en("preference", PR, 0.7, r"\bI(?:'d| would) rather\b"),
    en("preference", PR, 0.7, r"\b(?:prefer|use) [\w.+#/-]+ (?:over|instead of|rather than)\b"),
    # the user's own setup, a durable fact of theirs: "My editor is vim", "I use fish." (the
    # whole sentence, so "I use this helper to parse it" is no setup); what the thing is
    # like or doing ("my laptop is like half my lifeline", LoCoMo conv-42) is no setup
    en(
        "preference",
        PR,
        0.7,
        r"\bmy (?:[\w-]+ )?(?:editor|ide|shell|terminal|os|operating system|distro|browser|"
        r"keyboard(?: layout)?|font|theme|colou?r ?scheme|laptop|machine|computer|"
        r"window manager|package manager|version manager|multiplexer|prompt) (?:is|are)\b"
        r"(?! (?:like|so|too|very|really|kind of|sort of|still|not|being|getting|acting)\b)",
    ),
    en(
        "preference",
        PR,
        0.7,
        r"^\W*I(?: mainly| mostly| now| usually)? use `?[\w.+#/-]+`?"
        r"(?: (?:as my|for(?: my)?) [\w -]{1,40})?\W*$",
    ),
    # habits
    en("habit", PA, 0.6, r"\bI (?:usually|always|normally|typically|often|generally)\b"),
    en("habit", PA, 0.6, r"\bevery (?:day|morning|evening|night|week|month|time I)\b"),
    en("habit", PA, 0.6, r"\bI tend to\b"),
    en("habit", PA, 0.6, r"\bmy (?:workflow|routine|habit|setup)\b"),
    # goals
    en("goal", P, 0.6, r"\bI (?:want|plan|hope|intend|aim) to (?!know\b|see\b|ask\b)"),
    en("goal", P, 0.6, r"\b(?:my|our) (?:goal|aim|plan|objective) (?:is|was)\b"),
    en("goal", P, 0.6, r"\bI'm (?:trying|planning|learning|working) (?:to|on)\b"),
    # biography
    en("biography", P, 0.8, r"\b(?:my name is|call me|I'm called)\b"),
    en("biography", P, 0.8, r"\bI (?:work|worked) (?:as|at|for|in)\b"),
    en("biography", P, 0.8, r"\bI(?: currently)? (?:live|am based|'m based) in\b|\bI'm from\b"),
    en("biography", P, 0.8, r"\bmy (?:job|role|title|team|company|employer|manager)\b"),
    en(
        "biography",
        P,
        0.8,
        r"\bI(?:'m| am) an? (?:\w+ )?(?:developer|engineer|designer|"
        r"student|manager|scientist|researcher|admin|architect|teacher|writer)\b",
    ),
    en("biography", P, 0.8, r"\bI(?: have|'ve) (?:\d+|many|several) years of\b"),
    en("biography", P, 0.8, r"\bI speak\b|\bmy (?:native|first) language\b"),
    # how the team does a task, with what: "we deploy with make release from main", "we run
    # the migrations with alembic" (a procedure, tried before the project fact "we use uv" /
    # "we host on fly.io" below, which took it: two README walks, s30-remember)
    en(
        "procedure",
        PA,
        0.7,
        r"\bwe (?:deploy|build|release|ship|publish|test|run|lint|format|migrate|back up|"
        r"provision|package|bump|tag|roll back)\b(?! (?:into|out|across|over)\b)"
        r"[^.;!?\n]{0,40}?\b(?:with|using|via|through|by)\s+[`\w./-]",
    ),
    # project facts
    en(
        "project",
        E,
        0.7,
        r"\b(?:our|the|this) (?:[\w-]+ )?(?:project|repo|repository|app|service|codebase|"
        r"api|backend|frontend|site) (?:uses|is built (?:with|on)|runs on|depends on|"
        r"is written in|lives in|is deployed)\b",
    ),
    en(
        "project",
        E,
        0.7,
        r"\bwe (?:use|deploy|build|host|run|test|ship|release) "
        r"(?:with |on |using |via |to )?[\w`./-]",
    ),
    en(
        "project",
        E,
        0.7,
        r"\b(?:the )?(?:database|db|server|config|build|ci|tests?|logs?|cache|"
        r"docs) (?:is|are|lives?|runs?|goes|go) (?:at|in|on|under)\b",
    ),
    en(
        "project",
        E,
        0.7,
        r"\b(?:the|our) (?:[\w-]+ )?(?:port|url|endpoint|host|branch|bucket|ttl|timeout|"
        r"limit|version|region) (?:is|are|for)\b",
    ),
    en("project", E, 0.7, r"\b(?:has |was |were )?(?:moved|renamed|relocated) to\b"),
    # what a thing of the project is called and where it lives: "our staging database is called
    # pelican-stage", "the deploy key lives in 1Password"; a call of code ("the hook is called
    # twice") is no name, and a place that names nothing ("is stored on a server") no fact
    en(
        "project",
        E,
        0.7,
        r"\b(?:our|the|this|my) (?:[\w-]+ ){1,3}?(?:is|are) (?:called|named|known as)\s"
        r"(?!(?:once|twice|again|only|when|whenever|if|by|from|in|inside|on|at|after|before|"
        r"during|every|each|for|with|multiple|several|many|repeatedly|directly|the|a|an|"
        r"\w+ times)\b)[`\"']?[\w@./:-]",
    ),
    en(
        "project",
        E,
        0.7,
        r"\b(?:our|the|this|my) (?:[\w-]+ ){1,3}?(?:lives?|(?:is|are) "
        r"(?:hosted|located|kept|stored))\s(?:at|in|on|under) "
        r"[`\"']?(?:[~/.$]|\w+://|\w*[\d./:@]|(?-i:[A-Z]))",
    ),
    # when something runs: "the nightly restore job runs at 03:30 UTC", "backups run every 6
    # hours", "the report goes out on Mondays" (not "a run on Sundays")
    en(
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
    en("rule", PA, 0.8, r"\bremember (?:that|to)\b"),
    en("rule", PA, 0.8, r"\b(?:must not|mustn't|must never|should never)\b"),
    en("rule", PA, 0.8, r"\b(?:it's |it is )?important (?:not )?to\b|\bkeep in mind that\b"),
    en(
        "rule",
        PA,
        0.8,
        r"^\W*(?:don't|do not|never) \w+\b.{0,60}?[,;]\s*(?:\w+ ){0,4}?(?:first|instead)\b",
    ),
    en("rule", PA, 0.8, r"\b(?:don't|do not|never) \w+ .{0,60}?\buntil\b"),
    en(
        "rule",
        PA,
        0.8,
        r"\b(?:always|never|don't|do not) (?:commit|push|deploy|merge|delete|"
        r"touch|edit|run|use|add|write)\b",
    ),
    en("rule", PA, 0.7, r"\b(?:is|are) deprecated\b|\bno longer (?:use|used)\b"),
    # what the user will not take: "TODO is not acceptable, implementation must be full"
    # (fresh's codemie; s32-distill)
    en("rule", PA, 0.8, r"\b(?:is|are) not (?:acceptable|allowed|permitted)\b"),
    # constraints a request sets: a limit, a scope kept small, what not to do
    en(
        "rule",
        PA,
        0.8,
        r"\b(?:max(?:imum)?|at most|no (?:more|longer) than|not (?:more|longer) than|under|"
        r"less than|within)\s+\d+\s*-?\s*(?:min(?:ute)?s?|sec(?:ond)?s?|h(?:ours?)?|lines?|"
        r"words?|pages?|slides?|char(?:acter)?s?|[km]b|ms|files?|steps?|items?|tokens?)\b",
    ),
    en(
        "rule",
        PA,
        0.8,
        r"\bkeep (?:it|things|this|the \w+) (?:minimal|simple|short|small|lean|focused)\b|"
        r"\b(?:minimal|minimum) (?:features?|changes?|scope|version|implementation)\b|"
        r"\bbare minimum\b|\bnothing (?:else|more|fancy)\b",
    ),
    en(
        "rule",
        PA,
        0.8,
        r"^\W*(?:please\s+)?(?:do not|don't|never|avoid)\s+(?:add|create|change|modify|install|"
        r"include|introduce|refactor|rename|remove|produce|generate|implement|mock|hardcode|"
        r"hard-code|use)\b",
    ),
    en(
        "rule",
        PA,
        0.8,
        r"^\W*(?:please\s+)?(?:only|just) (?:use|change|touch|modify|edit|implement|support|"
        r"target|focus on|scan|read|keep)\b",
    ),
    en(
        "rule",
        PA,
        0.7,
        r"^\W*(?:the |our |this )?[\w`./-]+(?: [\w`./-]+){0,3} (?:must|has to|needs to) "
        r"(?:be|use|run|work|support|stay|include|pass|keep|handle)\b",
    ),
    # cases and events
    en("case", C, 0.7, r"\b(?:the|that) (?:fix|solution|workaround|cause|root cause) (?:was|is)\b"),
    en("case", C, 0.7, r"\b(?:fixed|solved|resolved|worked around)\b.{3,80}?\bby\b"),
    en(
        "command",
        PA,
        0.7,
        r"^\W*(?:run|build|test|lint|format|deploy|install)\s+\S.{0,40}?\s(?:with|using|via)\s+"
        r"`?[\w.-]+",
    ),
    en(
        "case",
        C,
        0.7,
        r"\b(?:it|this|that) (?:broke|fails|failed|crashed|crashes) "
        r"(?:because|when|if)\b",
    ),
    # a failure and its cause, whatever failed ("The staging deploy failed this morning
    # because REDIS_URL pointed at port 6380; …": the rules kept nothing of it, s27-walk)
    en("case", C, 0.7, r"\b(?:broke|fails|failed|crashed|crashes)\b[^.;?!\n]{0,40}?\bbecause\b"),
    # "where we left off" is where a resumed session's person asks to go on from, no event
    # (fresh9's "pick up where we left off" was kept as one, beside the session's digest)
    en(
        "event",
        EV,
        0.5,
        r"\b(?:I|we) (?:just )?(?:released|shipped|launched|migrated|upgraded|"
        r"started|finished|moved|joined|left(?! off\b))\b",
    ),
    en(
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
    en(
        "rule",
        PA,
        0.8,
        r"\b(?:commit messages?|comments?|documentation|variable names|identifiers)\b"
        r"[^.?!]{0,30}?\bin (?:English|Chinese|Japanese|Korean)\b",
    ),
)
