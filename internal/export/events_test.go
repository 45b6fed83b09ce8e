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
)
