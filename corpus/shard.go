package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/sframesim/sframesim/internal/hostfile"
)

// ShardSpec is one shard of a split: the I-th of N, counted from 1, and
// where that came from (the --shard flag or the environment), for the
// report.
type ShardSpec struct {
	I, N   int
	Source string
}

func (s ShardSpec) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ParseShard parses "i/n": the i-th of n shards, counted from 1. Both are
// decimal digits only ("+1/2", " 1/2" and "1/2.0" are refused: a value
// from a CI template that is not a plain number is more likely a mistake
// than a shard).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = atoi(a)
		if err == nil {
			n, err = atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("shard %q: want i/n with 1 <= i <= n, e.g. 1/4", s)
	}
	return i, n, nil
}

// atoi parses a non-negative decimal number of digits only.
func atoi(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" || len(s) > 9 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return strconv.Atoi(s)
}

// The environment variables a shard is taken from when --shard is not
// given. EnvShard is "i/n" as --shard takes it; EnvShardIndex (0-based, as
// GitHub Actions' strategy.job-index) or JOB_COMPLETION_INDEX (0-based,
// set by a Kubernetes Indexed Job) with EnvShardCount (n) is the other
// form.
const (
	EnvShard      = "SFRAMESIM_SHARD"
	EnvShardIndex = "SFRAMESIM_SHARD_INDEX"
	EnvShardCount = "SFRAMESIM_SHARD_COUNT"
	EnvK8sIndex   = "JOB_COMPLETION_INDEX"
)

// ShardFromEnv returns the shard the environment names (lookup is
// os.LookupEnv), nil if it names none. A variable that is set but empty or
// not a number, an index without a count or a count without an index, two
// forms at once, or two indexes that disagree are errors: a half-set
// environment must not silently verify everything, or nothing.
func ShardFromEnv(lookup func(string) (string, bool)) (*ShardSpec, error) {
	get := func(name string) (string, bool, error) {
		v, ok := lookup(name)
		if ok && v == "" {
			return "", false, fmt.Errorf("%s is set but empty (a misspelt variable in the CI configuration?)", name)
		}
		return v, ok, nil
	}
	shard, hasShard, err := get(EnvShard)
	if err != nil {
		return nil, err
	}
	index, hasIndex, err := get(EnvShardIndex)
	if err != nil {
		return nil, err
	}
	k8s, hasK8s, err := get(EnvK8sIndex)
	if err != nil {
		return nil, err
	}
	count, hasCount, err := get(EnvShardCount)
	if err != nil {
		return nil, err
	}
	if hasShard {
		switch {
		case hasIndex || hasCount:
			return nil, fmt.Errorf("both %s=%s and %s: set %s=i/n, or %s and %s", EnvShard, shard,
				strings.Join(setNames(hasIndex, EnvShardIndex, hasCount, EnvShardCount), " and "), EnvShard, EnvShardIndex, EnvShardCount)
		case hasK8s:
			return nil, fmt.Errorf("both %s=%s and %s=%s (a Kubernetes Indexed Job): in an Indexed Job set %s to the Job's completions instead of %s",
				EnvShard, shard, EnvK8sIndex, k8s, EnvShardCount, EnvShard)
		}
		i, n, err := ParseShard(shard)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvShard, err)
		}
		return &ShardSpec{I: i, N: n, Source: EnvShard + "=" + shard}, nil
	}
	if !hasIndex && !hasK8s && !hasCount {
		return nil, nil
	}
	name, value := EnvShardIndex, index
	switch {
	case hasIndex && hasK8s && index != k8s:
		return nil, fmt.Errorf("%s=%s and %s=%s disagree: set one", EnvShardIndex, index, EnvK8sIndex, k8s)
	case !hasIndex && hasK8s:
		name, value = EnvK8sIndex, k8s
	case !hasIndex:
		return nil, fmt.Errorf("%s=%s is set, but no shard index: set %s (0-based; a Kubernetes Indexed Job sets %s)", EnvShardCount, count, EnvShardIndex, EnvK8sIndex)
	}
	if !hasCount {
		if name == EnvK8sIndex {
			return nil, fmt.Errorf("%s=%s is set (a Kubernetes Indexed Job), but %s is not: set it to the Job's completions, or pass --shard 1/1 to verify every binary in each pod", name, value, EnvShardCount)
		}
		return nil, fmt.Errorf("%s=%s is set, but %s is not: set it to the number of shards", name, value, EnvShardCount)
	}
	k, err := atoi(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	n, err := atoi(count)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("%s=%s: want the number of shards, 1 or more", EnvShardCount, count)
	}
	if k >= n {
		return nil, fmt.Errorf("%s=%s is not below %s=%s (the index counts from 0)", name, value, EnvShardCount, count)
	}
	return &ShardSpec{I: k + 1, N: n, Source: fmt.Sprintf("%s=%s, %s=%s", name, value, EnvShardCount, count)}, nil
}

// UnknownShardVars returns the variables of environ (os.Environ) whose
// names start like the shard variables but are none of them
// (SFRAMESIM_SHARD_IDX, SFRAMESIM_SHARDS): a misspelt variable would
// otherwise be ignored, and every job of a matrix run everything.
func UnknownShardVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvShard) && name != EnvShard && name != EnvShardIndex && name != EnvShardCount {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func setNames(a bool, an string, b bool, bn string) []string {
	var out []string
	if a {
		out = append(out, an)
	}
	if b {
		out = append(out, bn)
	}
	return out
}

// Partition splits jobs into n shards of nearly equal total Cost, by the
// longest-processing-time rule: jobs in order of decreasing cost (ties by
// key) each go to the shard with the least cost so far (ties: the one with
// fewest jobs, then the lowest). The split depends only on the keys and
// costs, so every machine
// that computes the same costs computes the same shards; they are
// disjoint, cover every job, and no shard's total exceeds another's by
// more than the costliest job. Each shard is sorted by key. With equal
// costs this deals the jobs round-robin in key order.
func Partition(jobs []Job, n int) [][]Job {
	jobs = append([]Job(nil), jobs...)
	sortJobs(jobs)
	order := byCost(jobs)
	shards := make([][]Job, n)
	load := make([]uint64, n)
	for _, k := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] || load[s] == load[best] && len(shards[s]) < len(shards[best]) {
				best = s
			}
		}
		shards[best] = append(shards[best], jobs[k])
		if sum, carry := bits.Add64(load[best], jobs[k].Cost, 0); carry == 0 {
			load[best] = sum
		} else {
			load[best] = ^uint64(0)
		}
	}
	for _, s := range shards {
		sortJobs(s)
	}
	return shards
}

// Shard returns the jobs of shard i of n (1 <= i <= n) of [Partition].
func Shard(jobs []Job, i, n int) []Job {
	return Partition(jobs, n)[i-1]
}

// byCost returns the indexes of jobs, costliest first, ties in the order
// of jobs.
func byCost(jobs []Job) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return jobs[order[a]].Cost > jobs[order[b]].Cost
	})
	return order
}

// Costs are the recorded costs of binaries: the instructions each checked
// in an earlier corpus run, by key.
type Costs struct {
	Insns map[string]uint64
	// SHA256 is the hex SHA-256 of the report they were read from: shards
	// split with different costs do not fit together.
	SHA256 string
}

// ReadCosts reads the instructions each binary checked from a corpus JSON
// report (`sframesim corpus --json`, of a whole run, a shard or a merge).
// Binaries that were interrupted or could not run have no cost.
func ReadCosts(path string) (*Costs, error) {
	data, err := hostfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Results *[]struct {
			Binary string `json:"binary"`
			Status Status `json:"status"`
			Report *struct {
				Instructions uint64 `json:"instructions"`
			} `json:"report"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonError(data, err))
	}
	if doc.Results == nil {
		return nil, fmt.Errorf("%s: not a corpus JSON report (no \"results\"): give the --json output of an earlier sframesim corpus run", path)
	}
	c := &Costs{Insns: map[string]uint64{}, SHA256: sha256Hex(data)}
	for _, r := range *doc.Results {
		if r.Report != nil && r.Status != StatusInterrupted && r.Report.Instructions > 0 {
			c.Insns[r.Binary] = r.Report.Instructions
		}
	}
	return c, nil
}

// SetCosts sets each job's Cost: the instructions recorded for it in
// costs; for a job without, an estimate: its file's size times the
// instructions per byte of the jobs with recorded costs (integer
// arithmetic: the same on every machine; a file that cannot be read
// costs 0, verify reports it). Without any recorded cost every job costs
// 1: shards are then balanced by count, dealt round-robin in key order,
// since file size alone predicts run time worse than that (a static glibc
// binary is large and quick, a dynamic one small and slow through ld.so;
// see BenchmarkShardBalance). The result depends only on costs and the
// files, so every shard of a split computes the same costs.
func SetCosts(jobs []Job, costs *Costs) {
	sizes := make([]uint64, len(jobs))
	for i, j := range jobs {
		if fi, err := os.Stat(j.Path); err == nil && fi.Mode().IsRegular() {
			sizes[i] = uint64(fi.Size())
		}
	}
	var knownInsns, knownBytes uint64
	for i, j := range jobs {
		if n, ok := costs.lookup(j.Key); ok {
			knownInsns += n
			knownBytes += sizes[i]
		}
	}
	for i := range jobs {
		j := &jobs[i]
		n, ok := costs.lookup(j.Key)
		switch {
		case ok:
			j.Cost = n
		case knownInsns == 0:
			j.Cost = 1
		case knownBytes == 0:
			j.Cost = knownInsns // no size to scale by: as costly as all known ones
		default:
			hi, lo := bits.Mul64(sizes[i], knownInsns)
			if hi < knownBytes {
				j.Cost, _ = bits.Div64(hi, lo, knownBytes)
			} else {
				j.Cost = ^uint64(0)
			}
		}
	}
}

func (c *Costs) lookup(key string) (uint64, bool) {
	if c == nil {
		return 0, false
	}
	n, ok := c.Insns[key]
	return n, ok
}

// SelectionDigest is the hex SHA-256 of the sorted keys of jobs: the
// binaries a run selected, which the shards of a split must cover exactly.
func SelectionDigest(jobs []Job) string {
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.Key
	}
	return keysDigest(keys)
}

func keysDigest(keys []string) string {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	var b bytes.Buffer
	for _, k := range sorted {
		fmt.Fprintf(&b, "%d:%s\n", len(k), k)
	}
	return sha256Hex(b.Bytes())
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
