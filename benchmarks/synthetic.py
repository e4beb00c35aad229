"""Realistic synthetic memories for scale benchmarks: varied sentences, not random tokens.

Sentences are built from templates of the kinds of facts an assistant keeps
(preferences, decisions, incidents, people, project facts), filled from word
lists with a seeded generator, so runs are repeatable.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

PEOPLE = [
    "Alice",
    "Bob",
    "Priya",
    "Sam",
    "Chen",
    "Fatima",
    "Lucas",
    "Olga",
    "Kenji",
    "Maria",
    "Tom",
    "Aisha",
    "Diego",
    "Hana",
    "Ivan",
    "Noor",
]
TOOLS = [
    "pnpm",
    "poetry",
    "uv",
    "ruff",
    "mypy",
    "pytest",
    "Docker",
    "Kubernetes",
    "Terraform",
    "Helm",
    "Grafana",
    "Prometheus",
    "Sentry",
    "Redis",
    "PostgreSQL",
    "SQLite",
    "Kafka",
    "RabbitMQ",
    "nginx",
    "Vault",
    "GitHub Actions",
    "Jenkins",
    "ArgoCD",
    "Celery",
    "FastAPI",
    "Django",
    "React",
    "Vite",
    "Go",
    "Rust",
    "TypeScript",
    "Bazel",
    "Make",
]
SERVICES = [
    "billing",
    "auth",
    "search",
    "payments",
    "notifications",
    "gateway",
    "reporting",
    "ingest",
    "scheduler",
    "profile",
    "inventory",
    "checkout",
    "analytics",
    "mailer",
]
PLACES = [
    "staging",
    "production",
    "the dev cluster",
    "CI",
    "the EU region",
    "the US region",
    "the laptop setup",
    "the nightly job",
    "the load balancer",
    "the read replica",
]
TIMES = [
    "every night at 02:00",
    "on Mondays",
    "after each release",
    "twice a day",
    "before the sprint review",
    "at the end of each month",
    "every six hours",
    "when the queue backs up",
    "during the freeze",
    "on the first of the month",
]
FEELINGS = ["prefers", "likes", "dislikes", "always uses", "avoids", "insists on", "recommends"]
STYLES = [
    "small pull requests",
    "squash merges",
    "tabs over spaces",
    "type hints everywhere",
    "short functions",
    "table-driven tests",
    "trunk-based development",
    "feature flags",
    "dark mode",
    "vim keybindings",
    "detailed commit messages",
    "pair programming",
]
PROBLEMS = [
    "a memory leak",
    "an expired certificate",
    "a deadlock",
    "a slow query",
    "a full disk",
    "a race condition",
    "a DNS outage",
    "a bad migration",
    "a flaky test",
    "a misconfigured timeout",
    "a connection pool exhaustion",
]
FIXES = [
    "raising the pool size",
    "adding an index",
    "rotating the certificate",
    "pinning the dependency",
    "adding a retry with backoff",
    "rolling back the deploy",
    "splitting the batch",
    "moving the job off peak hours",
    "adding a circuit breaker",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

TEMPLATES = [
    "{person} {feeling} {style} when working on the {service} service.",
    "The {service} service runs on {tool} in {place}.",
    "We deploy {service} with {tool} {time}.",
    "In {month} {service} went down because of {problem}; it was fixed by {fix}.",
    "{person} owns the {service} service and reviews every change to it.",
    "Backups of the {service} database run {time} and are kept for {n} days.",
    "The {service} team decided to replace {tool} with {tool2} in {month}.",
    "{person} is the on-call contact for {service} {time}.",
    "Never run {tool} migrations on {place} without telling {person} first.",
    "The {service} API has a rate limit of {n} requests per minute per client.",
    "{person} {feeling} {tool} and asked that new projects use it.",
    "When {service} is slow, check {problem} first; last time the fix was {fix}.",
    "The config for {service} lives in services/{service}/config.yaml and is read by {tool}.",
    "{person} moved to the {service} team in {month} after working on {service2}.",
    "Load tests for {service} target p95 under {n} ms at {n2} requests per second.",
]


def synthetic_memories(count: int, seed: int = 7) -> Iterator[str]:
    """``count`` varied, realistic memory sentences, the same ones for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        template = rng.choice(TEMPLATES)
        yield template.format(
            person=rng.choice(PEOPLE),
            feeling=rng.choice(FEELINGS),
            style=rng.choice(STYLES),
            service=rng.choice(SERVICES),
            service2=rng.choice(SERVICES),
            tool=rng.choice(TOOLS),
            tool2=rng.choice(TOOLS),
            place=rng.choice(PLACES),
            time=rng.choice(TIMES),
            problem=rng.choice(PROBLEMS),
            fix=rng.choice(FIXES),
            month=rng.choice(MONTHS),
            n=rng.choice([5, 7, 14, 30, 60, 90, 100, 250, 500, 1000]),
            n2=rng.choice([50, 100, 200, 500, 1000, 2000]),
        )


QUERIES = [
    "how do we deploy the billing service?",
    "who owns payments?",
    "what caused the last outage in search?",
    "which tools does Priya prefer?",
    "backup schedule for the auth database",
    "rate limit of the gateway API",
    "what did we replace Jenkins with?",
    "on-call contact for notifications",
    "where is the checkout config?",
    "load test targets for analytics",
]
