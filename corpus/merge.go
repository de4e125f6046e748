package corpus

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/sframesim/sframesim/internal/hostfile"
)

// ShardReport is a corpus JSON report read for [Merge], named by its file.
type ShardReport struct {
	Name string
	Doc  Document
}

// ReadReport reads a corpus JSON report (`sframesim corpus --json`).
func ReadReport(path string) (*ShardReport, error) {
	data, err := hostfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonError(data, err))
	}
	if probe["results"] == nil || probe["statuses"] == nil {
		return nil, fmt.Errorf("%s: not a corpus JSON report (no \"results\" or \"statuses\"): give the --json output of sframesim corpus", path)
	}
	r := &ShardReport{Name: path}
	if err := json.Unmarshal(data, &r.Doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonError(data, err))
	}
	if r.Doc.Setup.SelectedSHA256 == "" {
		return nil, fmt.Errorf("%s: the report has no \"setup\" (written by an older sframesim?): shard reports need it to be merged", path)
	}
	return r, nil
}

// Merge combines the reports of the shards of one split into the report
// of the whole run: the results of all shards in key order, summed up as
// one run's (Workers: the shards' together; Seconds: the slowest shard's).
// Apart from those, the shard fields and the times, it is the report an
// unsharded run of the same selection writes. The verdicts are the
// shards': each binary was judged in its shard against the expectations,
// so every expected problem of every binary is judged once.
//
// It is an error, naming the files, when the reports' setups differ (a
// different sframesim, manifest, expectations file, --run, --max-insns or
// --timeout), when they are of different splits or split by different
// costs, when a shard is missing or given twice, when a binary is in two
// reports, when the shards do not cover the selection exactly, or when
// a report is itself a merge.
func Merge(reports []*ShardReport) (Summary, []Result, error) {
	if len(reports) == 0 {
		return Summary{}, nil, fmt.Errorf("no reports to merge")
	}
	first := reports[0]
	var (
		n       int
		byIndex = map[int]string{}
		owner   = map[string]string{}
		results []Result
		infos   []ShardInfo
		s       = Summary{Input: first.Doc.Input, Setup: first.Doc.Setup, Skipped: first.Doc.Skipped, Stale: first.Doc.Stale}
	)
	for _, r := range reports {
		d := &r.Doc
		if len(d.Shards) > 0 {
			return s, nil, fmt.Errorf("%s is a merged report (of %d shards): merge the shard reports themselves", r.Name, len(d.Shards))
		}
		if why := setupDiff(&first.Doc.Setup, &d.Setup); why != "" {
			return s, nil, fmt.Errorf("%s and %s are not of the same run: %s", first.Name, r.Name, why)
		}
		if !reflect.DeepEqual(first.Doc.Skipped, d.Skipped) || !reflect.DeepEqual(first.Doc.Stale, d.Stale) {
			return s, nil, fmt.Errorf("%s and %s list different skipped files or stale expectations: not of the same input", first.Name, r.Name)
		}
		if d.CostsSHA256 != first.Doc.CostsSHA256 {
			return s, nil, fmt.Errorf("%s and %s were split by different --costs reports: their shards do not fit together; run every shard with the same --costs file", first.Name, r.Name)
		}
		shard := d.Shard
		if shard == "" {
			shard = "1/1" // an unsharded run is the one shard of a split in one
		}
		i, sn, err := ParseShard(shard)
		if err != nil {
			return s, nil, fmt.Errorf("%s: %v", r.Name, err)
		}
		if n == 0 {
			n = sn
		} else if sn != n {
			return s, nil, fmt.Errorf("%s is shard %s but %s is shard %s: not of the same split", first.Name, infos[0].Shard, r.Name, shard)
		}
		if other, dup := byIndex[i]; dup {
			return s, nil, fmt.Errorf("shard %s twice: %s and %s (was %s or the shard index not set in one job, so that it ran the same shard, or everything?)", shard, other, r.Name, EnvShard)
		}
		byIndex[i] = r.Name
		for k := range d.Results {
			key := d.Results[k].Key
			if other, dup := owner[key]; dup {
				return s, nil, fmt.Errorf("binary %s is in both %s and %s: the shards overlap", key, other, r.Name)
			}
			owner[key] = r.Name
		}
		results = append(results, d.Results...)
		infos = append(infos, ShardInfo{Report: r.Name, Shard: shard, Source: d.ShardSource, CostsSHA256: d.CostsSHA256,
			Binaries: len(d.Results), Workers: d.Workers, Seconds: d.Seconds, Interrupted: d.Interrupted})
		s.Workers += d.Workers
		s.Seconds = max(s.Seconds, d.Seconds)
		s.Interrupted = s.Interrupted || d.Interrupted
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return s, nil, fmt.Errorf("missing shard report%s %s: all %d shards are needed", plural(len(missing)), strings.Join(missing, ", "), n)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Key < results[j].Key })
	keys := make([]string, len(results))
	for i := range results {
		keys[i] = results[i].Key
	}
	if len(results) != s.Setup.Selected || keysDigest(keys) != s.Setup.SelectedSHA256 {
		return s, nil, fmt.Errorf("the %d shards hold %s, but the run selected %s (or others): the shards were not split alike (different files on the machines?)",
			n, binaries(len(results)), binaries(s.Setup.Selected))
	}
	sort.Slice(infos, func(a, b int) bool {
		ia, _, _ := ParseShard(infos[a].Shard)
		ib, _, _ := ParseShard(infos[b].Shard)
		return ia < ib
	})
	s.Shards = infos
	return Summarize(s, results), results, nil
}

// setupDiff says how b differs from a, "" if it does not.
func setupDiff(a, b *Setup) string {
	switch {
	case a.Version != b.Version:
		return fmt.Sprintf("written by different versions of sframesim (%s and %s)", a.Version, b.Version)
	case a.InputSHA256 != b.InputSHA256:
		return "different manifests (their SHA-256 differ)"
	case a.ExpectSHA256 != b.ExpectSHA256:
		return fmt.Sprintf("judged against different expectations files (SHA-256 %s and %s)", orNoneSHA(a.ExpectSHA256), orNoneSHA(b.ExpectSHA256))
	case a.Run != b.Run:
		return fmt.Sprintf("different --run (%q and %q)", a.Run, b.Run)
	case a.MaxInsns != b.MaxInsns:
		return fmt.Sprintf("different --max-insns (%d and %d)", a.MaxInsns, b.MaxInsns)
	case a.Timeout != b.Timeout:
		return fmt.Sprintf("different --timeout (%s and %s)", a.Timeout, b.Timeout)
	case a.Selected != b.Selected || a.SelectedSHA256 != b.SelectedSHA256:
		return fmt.Sprintf("different binaries selected (%d and %d; the input differs)", a.Selected, b.Selected)
	}
	return ""
}

func orNoneSHA(s string) string {
	if s == "" {
		return "none: no --expect"
	}
	return s[:12] + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
