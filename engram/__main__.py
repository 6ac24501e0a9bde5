from engram.entry import main

raise SystemExit(main())
