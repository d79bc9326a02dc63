package cli

// For the tests of package cli_test.
var (
	NewCmdRootOnly  = newCmdRoot
	SubcommandNamed = subcommandNamed
)
