package corpus

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in     string
		i, n   int
		errSub string
	}{
		{in: "1/1", i: 1, n: 1},
		{in: "3/4", i: 3, n: 4},
		{in: "0/4", errSub: "1 <= i <= n"},
		{in: "5/4", errSub: "1 <= i <= n"},
		{in: "1/0", errSub: "1 <= i <= n"},
		{in: "2", errSub: "want i/n"},
		{in: "a/b", errSub: "want i/n"},
		{in: "-1/2", errSub: "want i/n"},
		{in: "+1/2", errSub: "want i/n"},
		{in: "1/2 ", errSub: "want i/n"},
		{in: "/2", errSub: "want i/n"},
	}
	for _, tt := range tests {
		i, n, err := ParseShard(tt.in)
		if tt.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Errorf("ParseShard(%q): err %v, want one containing %q", tt.in, err, tt.errSub)
			}
			continue
		}
		if err != nil || i != tt.i || n != tt.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v; want %d, %d", tt.in, i, n, err, tt.i, tt.n)
		}
	}
}

// TestShardFromEnv: each form of the environment gives its shard and says
// where it came from; a half-set, empty, malformed or contradictory
// environment is an error naming the variables, never a full or empty run.
func TestShardFromEnv(t *testing.T) {
	tests := []struct {
		env    map[string]string
		want   string // "i/n from SOURCE", "" for none
		errSub string
	}{
		{env: nil, want: ""},
		{env: map[string]string{"PATH": "/bin"}, want: ""},
		{env: map[string]string{EnvShard: "2/4"}, want: "2/4 from SFRAMESIM_SHARD=2/4"},
		{env: map[string]string{EnvShardIndex: "0", EnvShardCount: "3"}, want: "1/3 from SFRAMESIM_SHARD_INDEX=0, SFRAMESIM_SHARD_COUNT=3"},
		{env: map[string]string{EnvK8sIndex: "2", EnvShardCount: "3"}, want: "3/3 from JOB_COMPLETION_INDEX=2, SFRAMESIM_SHARD_COUNT=3"},
		{env: map[string]string{EnvK8sIndex: "1", EnvShardIndex: "1", EnvShardCount: "3"}, want: "2/3 from SFRAMESIM_SHARD_INDEX=1, SFRAMESIM_SHARD_COUNT=3"},
		{env: map[string]string{EnvShard: ""}, errSub: "SFRAMESIM_SHARD is set but empty"},
		{env: map[string]string{EnvShardIndex: "", EnvShardCount: "2"}, errSub: "SFRAMESIM_SHARD_INDEX is set but empty"},
		{env: map[string]string{EnvShard: "3/2"}, errSub: `SFRAMESIM_SHARD: shard "3/2": want i/n`},
		{env: map[string]string{EnvShard: "1/2", EnvShardCount: "2"}, errSub: "both SFRAMESIM_SHARD=1/2 and SFRAMESIM_SHARD_COUNT"},
		{env: map[string]string{EnvShard: "1/2", EnvK8sIndex: "0"}, errSub: "set SFRAMESIM_SHARD_COUNT to the Job's completions instead of SFRAMESIM_SHARD"},
		{env: map[string]string{EnvK8sIndex: "3"}, errSub: "JOB_COMPLETION_INDEX=3 is set (a Kubernetes Indexed Job), but SFRAMESIM_SHARD_COUNT is not"},
		{env: map[string]string{EnvShardIndex: "3"}, errSub: "SFRAMESIM_SHARD_INDEX=3 is set, but SFRAMESIM_SHARD_COUNT is not"},
		{env: map[string]string{EnvShardCount: "4"}, errSub: "SFRAMESIM_SHARD_COUNT=4 is set, but no shard index"},
		{env: map[string]string{EnvShardIndex: "4", EnvShardCount: "4"}, errSub: "SFRAMESIM_SHARD_INDEX=4 is not below SFRAMESIM_SHARD_COUNT=4 (the index counts from 0)"},
		{env: map[string]string{EnvShardIndex: "1", EnvShardCount: "0"}, errSub: "SFRAMESIM_SHARD_COUNT=0: want the number of shards"},
		{env: map[string]string{EnvShardIndex: "x", EnvShardCount: "2"}, errSub: `SFRAMESIM_SHARD_INDEX: "x" is not a number`},
		{env: map[string]string{EnvShardIndex: "1", EnvK8sIndex: "0", EnvShardCount: "2"}, errSub: "SFRAMESIM_SHARD_INDEX=1 and JOB_COMPLETION_INDEX=0 disagree"},
	}
	for _, tt := range tests {
		lookup := func(name string) (string, bool) {
			v, ok := tt.env[name]
			return v, ok
		}
		spec, err := ShardFromEnv(lookup)
		got := ""
		if spec != nil {
			got = spec.String() + " from " + spec.Source
		}
		switch {
		case tt.errSub != "" && (err == nil || !strings.Contains(err.Error(), tt.errSub)):
			t.Errorf("%v: %q, %v; want an error containing %q", tt.env, got, err, tt.errSub)
		case tt.errSub == "" && (err != nil || got != tt.want):
			t.Errorf("%v: %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

func TestUnknownShardVars(t *testing.T) {
	env := []string{"PATH=/bin", "SFRAMESIM_SHARD=1/2", "SFRAMESIM_SHARD_INDEX=0", "SFRAMESIM_SHARD_COUNT=2", "SFRAMESIM_SHARDS=4", "SFRAMESIM_SHARD_IDX=1", "SFRAMESIM_BENCH_COSTS=x", "JOB_COMPLETION_INDEX=0"}
	if got, want := UnknownShardVars(env), []string{"SFRAMESIM_SHARDS", "SFRAMESIM_SHARD_IDX"}; !reflect.DeepEqual(got, want) {
		t.Errorf("UnknownShardVars = %q, want %q", got, want)
	}
}

// TestPartition: over many random corpora and every n, the shards are
// disjoint, cover every job, are sorted by key, do not depend on the
// input order, and are balanced: no shard's total cost exceeds another's
// by more than the costliest job (the bound of greedy list scheduling).
// With equal costs the split is the round-robin of the sorted keys.
func TestPartition(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		jobs := make([]Job, rng.Intn(40))
		var maxCost uint64
		for i := range jobs {
			jobs[i] = Job{Key: fmt.Sprintf("k%03d", rng.Intn(1000)*1000+i)}
			switch trial % 3 {
			case 0: // heavy-tailed, like a corpus with a few long programs
				jobs[i].Cost = uint64(rng.ExpFloat64() * 1e6)
			case 1:
				jobs[i].Cost = uint64(rng.Intn(5))
			}
			maxCost = max(maxCost, jobs[i].Cost)
		}
		shuffled := append([]Job(nil), jobs...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for n := 1; n <= len(jobs)+2; n++ {
			shards := Partition(jobs, n)
			if again := Partition(shuffled, n); !reflect.DeepEqual(again, shards) {
				t.Fatalf("trial %d, n %d: the split depends on the input order", trial, n)
			}
			seen := map[string]int{}
			var lo, hi uint64 = ^uint64(0), 0
			for i, s := range shards {
				var total uint64
				for k, j := range s {
					seen[j.Key]++
					total += j.Cost
					if k > 0 && s[k-1].Key >= j.Key {
						t.Fatalf("trial %d, shard %d/%d is not sorted by key: %v", trial, i+1, n, keys(s))
					}
				}
				lo, hi = min(lo, total), max(hi, total)
				if got := Shard(jobs, i+1, n); !reflect.DeepEqual(got, s) {
					t.Fatalf("Shard(%d/%d) differs from Partition", i+1, n)
				}
			}
			for _, j := range jobs {
				if seen[j.Key] != 1 {
					t.Fatalf("trial %d, split into %d: %s is in %d shards", trial, n, j.Key, seen[j.Key])
				}
			}
			if len(seen) != len(jobs) {
				t.Fatalf("trial %d, split into %d: %d keys for %d jobs", trial, n, len(seen), len(jobs))
			}
			if hi-lo > maxCost {
				t.Fatalf("trial %d, split into %d: totals from %d to %d, more apart than the costliest job (%d)", trial, n, lo, hi, maxCost)
			}
			if trial%3 == 2 { // equal costs: round-robin
				sorted := append([]Job(nil), jobs...)
				sortJobs(sorted)
				for k, j := range sorted {
					if s := shards[k%n]; len(s) <= k/n || s[k/n].Key != j.Key {
						t.Fatalf("trial %d, split into %d, equal costs: %s is not dealt to shard %d", trial, n, j.Key, k%n+1)
					}
				}
			}
		}
	}

	jobs := []Job{{Key: "v2/b"}, {Key: "v1/a"}, {Key: "v3/c"}, {Key: "v1/b"}, {Key: "v2/a"}, {Key: "v3/a"}, {Key: "v1/c"}}
	if got, want := keys(Shard(jobs, 2, 3)), []string{"v1/b", "v2/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("shard 2/3 = %v, want %v", got, want)
	}
	// The longest first: a job as costly as all others together fills a
	// shard of its own.
	jobs[4].Cost = 100
	for i := range jobs {
		if i != 4 {
			jobs[i].Cost = 16
		}
	}
	if got, want := keys(Shard(jobs, 1, 2)), []string{"v2/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("shard 1/2 by cost = %v, want %v", got, want)
	}
	if got, want := keys(Filter(jobs, regexp.MustCompile("^v1/"))), []string{"v1/a", "v1/b", "v1/c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Filter = %v", got)
	}
}

// TestCosts: recorded instructions are the cost; other binaries are
// estimated from their size, scaled by the recorded instructions per byte;
// without any record all cost the same.
func TestCosts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jobs := []Job{{Key: "a", Path: write("a", 100)}, {Key: "b", Path: write("b", 300)}, {Key: "c", Path: write("c", 50)}, {Key: "gone", Path: filepath.Join(dir, "gone")}}
	SetCosts(jobs, nil)
	if got := []uint64{jobs[0].Cost, jobs[1].Cost, jobs[2].Cost, jobs[3].Cost}; !reflect.DeepEqual(got, []uint64{1, 1, 1, 1}) {
		t.Errorf("costs without a record: %v, want all equal", got)
	}
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, []byte(`{"results": [
		{"binary": "a", "status": "clean", "report": {"instructions": 5000}},
		{"binary": "b", "status": "known", "report": {"instructions": 7000}},
		{"binary": "x", "status": "interrupted", "report": {"instructions": 9}},
		{"binary": "y", "status": "error"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	costs, err := ReadCosts(report)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(costs.Insns, map[string]uint64{"a": 5000, "b": 7000}) || len(costs.SHA256) != 64 {
		t.Errorf("costs read: %+v", costs)
	}
	SetCosts(jobs, costs)
	// c: 50 bytes at 12000 instructions per 400 bytes.
	if got := []uint64{jobs[0].Cost, jobs[1].Cost, jobs[2].Cost, jobs[3].Cost}; !reflect.DeepEqual(got, []uint64{5000, 7000, 1500, 0}) {
		t.Errorf("recorded and estimated costs: %v", got)
	}
	for _, tt := range []struct{ text, errSub string }{
		{`{"binaries": {}}`, `not a corpus JSON report (no "results")`},
		{`{"results": [}`, "offset 14"},
	} {
		if err := os.WriteFile(report, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCosts(report); err == nil || !strings.Contains(err.Error(), tt.errSub) || !strings.Contains(err.Error(), report) {
			t.Errorf("%s: %v, want an error naming the file and %q", tt.text, err, tt.errSub)
		}
	}
}

// shardReports splits results as Partition does and makes each shard's
// report, as `corpus --shard i/n --json` writes it.
func shardReports(setup Setup, jobs []Job, results map[string]Result, n int) []*ShardReport {
	var out []*ShardReport
	for i, s := range Partition(jobs, n) {
		var rs []Result
		for _, j := range s {
			rs = append(rs, results[j.Key])
		}
		sum := Summarize(Summary{Input: "m.json", Setup: setup, Shard: fmt.Sprintf("%d/%d", i+1, n), ShardSource: "--shard", Workers: 2, Seconds: float64(i + 1)}, rs)
		out = append(out, &ShardReport{Name: fmt.Sprintf("shard%d.json", i+1), Doc: Document{Summary: sum, Results: rs}})
	}
	return out
}

// TestMerge: shard reports merge into the unsharded summary and results;
// reports that do not fit together are refused with the reason.
func TestMerge(t *testing.T) {
	var jobs []Job
	results := map[string]Result{}
	var all []Result
	for i, k := range []string{"a/1", "a/2", "b/1", "b/2", "c/1"} {
		jobs = append(jobs, Job{Key: k, Cost: uint64(10 * (i%3 + 1))})
		r := Judge(jobs[i], Outcome{Report: report()}, nil)
		results[k] = r
		all = append(all, r)
	}
	setup := Setup{Version: "v1", Selected: len(jobs), SelectedSHA256: SelectionDigest(jobs)}
	whole := Summarize(Summary{Input: "m.json", Setup: setup, Workers: 2, Seconds: 1}, all)
	for n := 1; n <= 7; n++ {
		sum, merged, err := Merge(shardReports(setup, jobs, results, n))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !reflect.DeepEqual(merged, all) {
			t.Errorf("n=%d: merged results %v", n, merged)
		}
		if len(sum.Shards) != n || sum.Workers != 2*n || sum.Seconds != float64(n) || sum.Shards[n-1].Shard != fmt.Sprintf("%d/%d", n, n) {
			t.Errorf("n=%d: shards %+v, workers %d, seconds %v", n, sum.Shards, sum.Workers, sum.Seconds)
		}
		sum.Shards, sum.Workers, sum.Seconds = nil, whole.Workers, whole.Seconds
		if !reflect.DeepEqual(sum, whole) {
			t.Errorf("n=%d: merged summary\n%+v\nwant\n%+v", n, sum, whole)
		}
	}

	bad := func(change func(rs []*ShardReport) []*ShardReport, errSub string) {
		t.Helper()
		rs := change(shardReports(setup, jobs, results, 3))
		if _, _, err := Merge(rs); err == nil || !strings.Contains(err.Error(), errSub) {
			t.Errorf("err %v, want one containing %q", err, errSub)
		}
	}
	bad(func(rs []*ShardReport) []*ShardReport { return rs[:2] }, "missing shard report 3/3: all 3 shards are needed")
	bad(func(rs []*ShardReport) []*ShardReport { return rs[1:2] }, "missing shard reports 1/3, 3/3")
	bad(func(rs []*ShardReport) []*ShardReport { return append(rs, rs[1]) }, "shard 2/3 twice: shard2.json and shard2.json")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[2].Doc.Setup.Version = "v2"
		return rs
	}, "shard1.json and shard3.json are not of the same run: written by different versions of sframesim (v1 and v2)")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Setup.InputSHA256 = "ab"
		return rs
	}, "different manifests")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Setup.ExpectSHA256 = strings.Repeat("ab", 32)
		return rs
	}, "judged against different expectations files (SHA-256 none: no --expect and abababababab…)")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Setup.MaxInsns = 5
		return rs
	}, "different --max-insns (0 and 5)")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.CostsSHA256 = "x"
		return rs
	}, "split by different --costs reports")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[2].Doc.Shard = "3/4"
		return rs
	}, "shard1.json is shard 1/3 but shard3.json is shard 3/4")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Results = append(rs[1].Doc.Results, rs[0].Doc.Results[0])
		return rs
	}, "binary "+rs0Key(setup, jobs, results)+" is in both shard1.json and shard2.json: the shards overlap")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Results = rs[1].Doc.Results[1:]
		return rs
	}, "the 3 shards hold 4 binaries, but the run selected 5 binaries")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Results[0].Key = "z"
		return rs
	}, "the 3 shards hold 5 binaries, but the run selected 5 binaries (or others)")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[1].Doc.Shards = []ShardInfo{{}, {}}
		return rs
	}, "shard2.json is a merged report (of 2 shards)")
	bad(func(rs []*ShardReport) []*ShardReport {
		rs[0].Doc.Shard = ""
		return []*ShardReport{rs[0], rs[0]}
	}, "shard 1/1 twice")
	bad(func(rs []*ShardReport) []*ShardReport { return nil }, "no reports to merge")
}

func rs0Key(setup Setup, jobs []Job, results map[string]Result) string {
	return shardReports(setup, jobs, results, 3)[0].Doc.Results[0].Key
}

// TestReadReport: files that are not corpus reports are refused.
func TestReadReport(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	for _, tt := range []struct{ text, errSub string }{
		{`{"comment": "x"}`, "not a corpus JSON report"},
		{`{"results": [], "statuses": {}}`, `the report has no "setup"`},
		{`[`, "offset 1"},
	} {
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadReport(p); err == nil || !strings.Contains(err.Error(), tt.errSub) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the file and %q", tt.text, err, tt.errSub)
		}
	}
}
