from memctl.cli.main import main

main()
