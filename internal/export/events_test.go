package export_test

// failedRun is the events.jsonl of a run of build-green.csv (fields the
// trace does not read left out): node 6 retried once, node 8 failed.
const failedRun = `{"time":"2026-11-22T05:28:46.355854626Z","event":"run_start","run_id":"20261122T052846Z-cba5a1","page":"2","start":"3","source":"build-green.csv"}
{"time":"2026-11-22T05:28:46.355988356Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"4","visit":1}
{"time":"2026-11-22T05:28:46.376401722Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"4","visit":1,"status":"succeeded","next":"5","label":""}
{"time":"2026-11-22T05:28:46.376560348Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"5","visit":1}
{"time":"2026-11-22T05:28:46.382085518Z","event":"decision","run_id":"20261122T052846Z-cba5a1","node":"5","next":"6","label":"No"}
{"time":"2026-11-22T05:28:46.382096959Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"5","visit":1,"status":"succeeded","next":"6","label":"No"}
{"time":"2026-11-22T05:28:46.382195543Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"6","visit":1}
{"time":"2026-11-22T05:28:46.395861864Z","event":"retry","run_id":"20261122T052846Z-cba5a1","node":"6","attempt":1}
{"time":"2026-11-22T05:28:46.409962416Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"6","visit":1,"status":"succeeded","next":"4","label":""}
{"time":"2026-11-22T05:28:46.410049569Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"4","visit":2}
{"time":"2026-11-22T05:28:46.414797141Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"4","visit":2,"status":"succeeded","next":"5","label":""}
{"time":"2026-11-22T05:28:46.415021711Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"5","visit":2}
{"time":"2026-11-22T05:28:46.419362748Z","event":"decision","run_id":"20261122T052846Z-cba5a1","node":"5","next":"7","label":"Yes"}
{"time":"2026-11-22T05:28:46.419371595Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"5","visit":2,"status":"succeeded","next":"7","label":"Yes"}
{"time":"2026-11-22T05:28:46.419460722Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"7","visit":1}
{"time":"2026-11-22T05:28:46.422774511Z","event":"decision","run_id":"20261122T052846Z-cba5a1","node":"7","next":"8","label":"No"}
{"time":"2026-11-22T05:28:46.422900586Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"7","visit":1,"status":"succeeded","next":"8","label":"No"}
{"time":"2026-11-22T05:28:46.422997167Z","event":"node_start","run_id":"20261122T052846Z-cba5a1","node":"8","visit":1}
{"time":"2026-11-22T05:28:46.430215831Z","event":"retry","run_id":"20261122T052846Z-cba5a1","node":"8","attempt":1}
{"time":"2026-11-22T05:28:46.433962424Z","event":"node_end","run_id":"20261122T052846Z-cba5a1","node":"8","visit":1,"status":"failed"}
{"time":"2026-11-22T05:28:46.434055427Z","event":"run_end","run_id":"20261122T052846Z-cba5a1","status":"failed","path":["3","4","5","6","4","5","7","8"],"error":"node 8 \"Add the missing entries to CHANGELOG.md.\" failed after 2 attempts: the agent call failed: fake exited with status 3"}`

// Shorter logs, written for the cases failedRun does not cover.
const (
	// a start terminator straight to an end terminator
	emptyRun = `{"event":"run_start","run_id":"r1","page":"1","start":"s","graph_digest":"9f2c"}
{"event":"end","run_id":"r1","node":"e"}
{"event":"run_end","run_id":"r1","status":"succeeded","path":["s","e"]}
`
	// a loop stopped by max_visits before entering a for the third time
	limitRun = `{"event":"run_start","run_id":"r2","page":"1","start":"a"}
{"event":"node_start","node":"a","visit":1}
{"event":"node_end","node":"a","status":"succeeded","next":"b","label":""}
{"event":"node_start","node":"b","visit":1}
{"event":"node_end","node":"b","status":"succeeded","next":"a","label":"No"}
{"event":"node_start","node":"a","visit":2}
{"event":"node_end","node":"a","status":"succeeded","next":"b","label":""}
{"event":"node_start","node":"b","visit":2}
{"event":"node_end","node":"b","status":"succeeded","next":"a","label":"No"}
{"event":"run_end","status":"limit_reached","path":["a","b","a","b"],"error":"node a reached its visit limit"}
`
	// interrupted, and killed while writing the next line
	interruptedRun = `{"event":"run_start","run_id":"r3","page":"1","start":"a"}
{"event":"node_start","node":"a","visit":1}
{"event":"node_end","node":"a","status":"interrupted","error":"interrupted"}
{"event":"run_end","status":"inter`
	// a fork of two branches (readme/parallel.md), their events
	// interleaved, met at review; the lines as a run of
	// testdata/charts/fork/fork.yaml's shape writes them, agent calls left
	// out
	forkRun = `{"time":"2026-11-27T08:03:57.461Z","event":"run_start","run_id":"r4","page":"1","start":"start","source":"chart.yaml"}
{"time":"2026-11-27T08:03:57.479Z","event":"node_start","node":"plan","role":"process","run_id":"r4","visit":1}
{"time":"2026-11-27T08:03:57.518Z","event":"node_end","label":"","next":"review","node":"plan","run_id":"r4","status":"succeeded","visit":1}
{"time":"2026-11-27T08:03:57.518Z","event":"branch_start","branch":"plan/a","first":"a","fork":"plan","name":"a","run_id":"r4"}
{"time":"2026-11-27T08:03:57.545Z","event":"branch_start","branch":"plan/b","first":"b","fork":"plan","name":"b","run_id":"r4"}
{"time":"2026-11-27T08:03:57.545Z","event":"node_start","branch":"plan/b","node":"b","role":"process","run_id":"r4","visit":1}
{"time":"2026-11-27T08:03:57.545Z","event":"node_start","branch":"plan/a","node":"a","role":"process","run_id":"r4","visit":1}
{"time":"2026-11-27T08:03:58.549Z","event":"node_end","branch":"plan/b","label":"","next":"review","node":"b","run_id":"r4","status":"succeeded","visit":1}
{"time":"2026-11-27T08:03:58.565Z","event":"branch_end","branch":"plan/b","path":["b"],"run_id":"r4","status":"succeeded"}
{"time":"2026-11-27T08:03:58.565Z","event":"node_start","branch":"plan/a","node":"c","role":"process","run_id":"r4","visit":1}
{"time":"2026-11-27T08:03:58.566Z","event":"node_end","branch":"plan/a","label":"","next":"c","node":"a","run_id":"r4","status":"succeeded","visit":1}
{"time":"2026-11-27T08:03:58.570Z","event":"node_end","branch":"plan/a","label":"","next":"review","node":"c","run_id":"r4","status":"succeeded","visit":1}
{"time":"2026-11-27T08:03:58.578Z","event":"branch_end","branch":"plan/a","path":["a","c"],"run_id":"r4","status":"succeeded"}
{"time":"2026-11-27T08:03:58.616Z","event":"join","branches":["plan/a","plan/b"],"fork":"plan","mode":"all","node":"review","run_id":"r4"}
{"time":"2026-11-27T08:03:58.624Z","event":"node_start","node":"review","role":"process","run_id":"r4","visit":1}
{"time":"2026-11-27T08:03:58.626Z","event":"node_end","label":"","next":"done","node":"review","run_id":"r4","status":"succeeded","visit":1}
{"time":"2026-11-27T08:03:58.628Z","event":"end","node":"done","run_id":"r4"}
{"time":"2026-11-27T08:03:58.630Z","event":"run_end","path":["start","plan","review","done"],"run_id":"r4","status":"succeeded"}
`
	// the same fork, branch b failing and a interrupted after it
	forkFailedRun = `{"event":"run_start","run_id":"r5","page":"1","start":"start"}
{"event":"node_start","node":"plan","visit":1}
{"event":"node_end","next":"review","node":"plan","status":"succeeded","visit":1}
{"event":"branch_start","branch":"plan/a","first":"a","fork":"plan","name":"a"}
{"event":"branch_start","branch":"plan/b","first":"b","fork":"plan","name":"b"}
{"event":"node_start","branch":"plan/a","node":"a","visit":1}
{"event":"node_start","branch":"plan/b","node":"b","visit":1}
{"event":"node_end","branch":"plan/b","error":"exit status 1","node":"b","status":"failed","visit":1}
{"event":"branch_end","branch":"plan/b","path":["b"],"status":"failed","error":"node b failed"}
{"event":"node_end","branch":"plan/a","error":"interrupted","node":"a","status":"interrupted","visit":1}
{"event":"branch_end","branch":"plan/a","path":["a"],"status":"interrupted","error":"interrupted"}
{"event":"run_end","path":["start","plan"],"status":"failed","error":"node b failed"}
`
	// forkInterruptedRun: Ctrl-C while both branches run.
	forkInterruptedRun = `{"event":"run_start","run_id":"r6","page":"1","start":"start"}
{"event":"node_start","node":"plan","visit":1}
{"event":"node_end","next":"review","node":"plan","status":"succeeded","visit":1}
{"event":"branch_start","branch":"plan/a","first":"a","fork":"plan","name":"a"}
{"event":"branch_start","branch":"plan/b","first":"b","fork":"plan","name":"b"}
{"event":"node_start","branch":"plan/a","node":"a","visit":1}
{"event":"node_start","branch":"plan/b","node":"b","visit":1}
{"event":"node_end","branch":"plan/a","error":"interrupted","node":"a","status":"interrupted","visit":1}
{"event":"node_end","branch":"plan/b","error":"interrupted","node":"b","status":"interrupted","visit":1}
{"event":"run_end","path":["start","plan"],"status":"interrupted","error":"interrupted"}
`
)
