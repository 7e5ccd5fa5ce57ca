package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"
)

// version is set at link time with -ldflags "-X main.version=v1.2.3"; a
// plain build reports the module version or the VCS revision.
var version = ""

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "strata",
		Short:         "Streaming ETL engine and versioned table store with consistent reads across tables",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var cpuProfile, memProfile string
	var stopProfile, stopHeap func()
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the command to this file")
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a heap profile (pprof) of the command to this file every 10s and at the end")
	stopProfiles := func() {
		if stopProfile != nil {
			stopProfile()
			stopProfile = nil
		}
		if stopHeap != nil {
			stopHeap()
			stopHeap = nil
		}
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cpuProfile == "" && memProfile == "" {
			return nil
		}
		if memProfile != "" {
			stopHeap = writeHeapProfiles(memProfile, 10*time.Second)
		}
		if cpuProfile != "" {
			f, err := os.Create(cpuProfile)
			if err != nil {
				stopProfiles()
				return fmt.Errorf("--cpuprofile: %w", err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				stopProfiles()
				return fmt.Errorf("--cpuprofile: %w", err)
			}
			stopProfile = func() {
				pprof.StopCPUProfile()
				f.Close()
			}
		}
		// The profiles end with the command's run, also when it fails
		// or is interrupted: cobra skips the post-run hooks after an
		// error, which left an empty CPU profile behind.
		if run := cmd.RunE; run != nil {
			cmd.RunE = func(c *cobra.Command, args []string) error {
				defer stopProfiles()
				return run(c, args)
			}
		}
		return nil
	}
	root.PersistentPostRun = func(*cobra.Command, []string) { stopProfiles() }
	root.AddCommand(newVersionCommand(), newDemoCommand(), newStartCommand(), newSQLCommand(), newVerifyCommand(), newBenchCommand())
	return root
}

// writeHeapProfiles writes a heap profile to path every interval, each
// replacing the last whole (written to a temporary file, then renamed), so
// that a run stopped at any moment leaves a readable profile. The function
// it returns stops it after one last profile.
func writeHeapProfiles(path string, interval time.Duration) (stop func()) {
	write := func() {
		tmp := path + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			fmt.Fprintf(os.Stderr, "strata: heap profile: %v\n", err)
			return
		}
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "strata: heap profile: %v\n", err)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				write()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		write()
	}
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "strata %s (%s, %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// buildVersion returns the link-time version, else the module version, else
// "devel" with the VCS revision when the build recorded one.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel+" + rev
}
