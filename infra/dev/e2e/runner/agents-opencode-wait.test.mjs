// prickle-runner's opencode template end to end: a call still pending past the gate's hold (see agents.mjs).
// The plugin awaits the gate with no bound of opencode's own, so this checks the runner's: 100 s.
import { agentSuite } from './agents.mjs';

agentSuite('opencode', 'wait');
