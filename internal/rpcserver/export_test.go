package rpcserver

// MaxIdleWorkers is maxIdle, for the workers' tests.
const MaxIdleWorkers = maxIdle
