"""Maintenance: work that keeps the store healthy, run from cron or by hand."""
