from memctl.cli.entry import main

main()
