package doctor

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lore-cli/lore/config"
)

// checkFolders checks that lore can write where it keeps its data
// (indexes, models, sessions) and its state (the log), and reports the
// config folder (lore only reads it unless a setting is saved). A folder
// that is not there yet is fine when lore can create it: it does on first
// use, and the check does not create it early.
func checkFolders(cfg config.Config, configFile string) []Check {
	return []Check{
		checkFolder("data", cfg.DataDir, Fail, "set XDG_DATA_HOME to a folder you own"),
		checkFolder("state", cfg.StateDir, Fail, "set XDG_STATE_HOME to a folder you own"),
		checkFolder("config", filepath.Dir(configFile), Warn, "set XDG_CONFIG_HOME to a folder you own"),
	}
}

func checkFolder(name, dir string, bad Status, alt string) Check {
	c := Check{Name: name, Status: OK, Detail: dir}
	if !filepath.IsAbs(dir) {
		// Relative only when there is no home (config.ErrNoHome): the
		// folder would move with the working directory.
		c.Status, c.Detail, c.Fix = bad, "no folder: HOME is not set", "set HOME, or "+alt
		return c
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := existingParent(dir)
		if err := writable(parent); err != nil {
			c.Status, c.Detail = bad, dir+" does not exist and cannot be created: "+parent+" is not writable"
			c.Fix = "create it with write access for you (mkdir -p " + dir + "), or " + alt
			return c
		}
		c.Detail = dir + " (will be created)"
		return c
	case err != nil:
		c.Status, c.Detail, c.Fix = bad, err.Error(), "make "+dir+" readable, or "+alt
		return c
	case !fi.IsDir():
		c.Status, c.Detail, c.Fix = bad, dir+" is a file, not a folder", "move the file away, or "+alt
		return c
	}
	if err := writable(dir); err != nil {
		c.Status, c.Detail = bad, dir+" is not writable"
		c.Fix = "make it writable (chmod u+w " + dir + "), or " + alt
	}
	return c
}

// existingParent is the nearest folder above dir that exists.
func existingParent(dir string) string {
	for {
		parent := filepath.Dir(dir)
		if _, err := os.Stat(parent); err == nil || parent == dir {
			return parent
		}
		dir = parent
	}
}

// writable creates and removes a file in dir: the only test that also
// sees read-only mounts, ACLs and full quotas.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".lore-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
