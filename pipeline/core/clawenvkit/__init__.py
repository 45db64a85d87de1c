"""ClawEnvKit's task format, their validator's and grader's rules, and a claw package's
translation into their format (``docs/clawenvkit.md``): below the verifier, whose export stage
uses them, and the interop layer, which writes and reads their task files."""
