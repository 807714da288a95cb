from mockoss.cli import main

raise SystemExit(main())
