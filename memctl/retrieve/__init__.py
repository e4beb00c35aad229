"""Recall: candidates -> fuse -> ... A pipeline is a list of stages run in order."""
