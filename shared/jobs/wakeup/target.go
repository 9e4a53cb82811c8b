package wakeup

// Target is the wake function's logical id in template.yaml: the name its
// rule delivers to, the local bus's handler key and its dedup target.
const Target = "WakeupFunction"
