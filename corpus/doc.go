// Package corpus verifies a whole corpus of binaries at once, for CI: the
// engine behind `sframesim corpus`.
//
// The input is a directory (every ELF executable with SFrame data under it;
// other files are listed as skipped, with the reason) or a manifest: a JSON
// array of objects naming each binary ("path", relative to the manifest),
// optionally its arguments ("args"), its standard input ("stdin") and what
// a correct run prints and returns ("stdout", "exit_status"); "stdin_file"
// and "stdout_file" name files holding those bytes instead. An entry's
// "name", when given, is its key in expectations and output instead of its
// path, so that one binary may be listed several times (an interpreter
// with several scripts). The committed corpus's
// testdata/corpus/manifest.json is such a manifest; other keys are ignored.
//
// Each binary runs through [verify.Run] in a pool of workers (one emulator
// each, in separate goroutines: the emulator keeps no shared mutable state
// but its lock-free engine-slot table). Its outcome is then judged against
// an expectations file (see [Expectations]): a binary not listed there must
// verify clean; a listed one must show exactly its known problems — by kind,
// function and FRE row, each with a reason — or be unsupported for the
// stated reason; with Options.CheckMalformed, a section that breaks rules
// of the format is checked anyway and must be expected to be malformed
// (Expect.Malformed). A problem that was not expected is a failure, and so is an
// expected problem that did not show up (the baseline has to stay honest).
// [Expectations.Update] rewrites the baseline from observed outcomes,
// keeping the reasons of entries that still hold.
//
// Work is split over machines with [Shard] ([Partition]): by the
// longest-processing-time rule over each binary's cost ([SetCosts]: the
// instructions it checked in an earlier report, [ReadCosts]), which with
// no recorded costs deals the binaries sorted by key round-robin; either
// way every machine computes the same split. [ShardFromEnv] takes the
// shard from a CI matrix's or a Kubernetes Indexed Job's environment.
// [Merge] combines the shards' JSON reports into the whole run's, after
// checking that they fit together (same [Setup], every shard once, no
// binary twice, the selection covered exactly). [Run] starts the
// costliest binaries first.
//
// Results are written as a text summary, JSON (everything, including each
// binary's full verify report) and JUnit XML (one testcase per binary).
// Malformed manifests and expectations files give errors naming the file
// and the byte offset or entry; nothing here panics on bad input.
package corpus
