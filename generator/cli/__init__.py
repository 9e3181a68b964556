"""The command line, the only modules that print: `main` (argv -> options -> pipeline -> exit
status), `install` (check, vendor, integration, wisdom), `common` (what they share), and one module
per other command (`bench`, `vendor`, `host`)."""
