// prickle-runner's qwen template end to end: a call still pending past the gate's hold (see agents.mjs).
import { agentSuite } from './agents.mjs';

agentSuite('qwen', 'wait');
