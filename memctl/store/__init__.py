"""The only package that speaks SQL."""
