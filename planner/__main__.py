from planner.entry import main

main()
