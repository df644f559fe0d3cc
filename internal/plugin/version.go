package plugin

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// AWFVersion is the AWF release whose plugin protocol and behaviour reel
// follows (github.com/awf-project/cli at 9971294, after 0.11.0): a
// manifest's awf_version constraint is checked against it.
const AWFVersion = "0.11.0"

func parseConstraint(s string) (*semver.Constraints, error) {
	c, err := semver.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("not a version constraint: %v", err)
	}
	return c, nil
}

// compatible reports an error when the manifest's awf_version excludes
// AWFVersion.
func (m *Manifest) compatible() error {
	c, err := parseConstraint(m.AWFVersion)
	if err != nil {
		return err
	}
	if !c.Check(semver.MustParse(AWFVersion)) {
		return fmt.Errorf("plugin requires AWF %s; reel speaks AWF %s's plugin protocol", m.AWFVersion, AWFVersion)
	}
	return nil
}
