"""One module per ``dsasim`` subcommand: ``add_parser(subparsers)`` and ``main(args)``."""
