from memctl.cli.entry import script

script()
