// prickle-runner's opencode template end to end with the real CLI: see agents.mjs.
import { agentSuite } from './agents.mjs';

agentSuite('opencode');
