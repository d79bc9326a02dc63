// Command hopctl statically analyses PyTorch FX graphs and their HOP subgraphs.
package main

import (
	"os"

	"github.com/hopctl/hopctl/internal/cli"
	"github.com/hopctl/hopctl/internal/iostreams"
)

func main() { os.Exit(cli.Main(os.Args[1:], iostreams.System())) }
