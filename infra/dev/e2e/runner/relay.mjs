// The relay of agents-chain.test.mjs, as the stand-in models (storyModel, codexModel, wokenModel) play
// it: a task whose packet's context names the agents the chain goes on to after its assignee. Each
// agent reads its task (get_task), makes its one guarded call and, once its owner decided, hands the
// next link to the next agent on the route (hand_off_task: the rest of the route, and what its call came
// to) and, when the call ran, returns its result; a requester woken for a returned result
// (result_returned) reads the task and accepts it (review_result). Every call is worded afresh.
import { reorder } from './responses.mjs';
import { PROJECT } from '../lib/env.mjs';

const ROUTE = /Relay route after you: (none|[a-z0-9/-]+(?:, [a-z0-9/-]+)*)\./;
const pick = (a) => a[Math.floor(Math.random() * a.length)];

/** A relay task's context: the agents after its assignee (none: the last link), then what came before. */
export const relayContext = (rest, before) => `Relay route after you: ${rest.length ? rest.join(', ') : 'none'}. ${before}`;

/** The agents after the assignee, from get_task's answer (in whatever wrapping the CLI gives it); null: no relay. */
export function routeOf(text) {
  const m = ROUTE.exec(text || '');
  if (!m) return null;
  return m[1] === 'none' ? [] : m[1].split(', ');
}

/** What the link came to, for the next link's context: its call ran. */
export const ranOutcome = () => pick(['The previous link ran its one command, approved by its owner.',
  'Previous link: its owner approved the command and it ran once.', 'The link before you ran its command once (approved).']);

/** What the link came to, for the next link's context: its call was not made, and what it was told. */
export const notRunOutcome = (told) => `${pick(['The previous link\'s command was not run; it was told:', 'Previous link: its call was not made. What it heard:'])} ${String(told).slice(0, 1500)}`;

/** hand_off_task's arguments for the next link on route (its first agent), worded afresh. */
export function handOffArgs(route, outcome) {
  const [next, ...rest] = route;
  return reorder({ project: PROJECT, assignee: next, packet: { task: pick(['Relay link: append a line to your side file',
    'Next relay link: write your line into the side file', 'Relay: add one line to your side-effect file']),
  deliverable_type: 'answer', context: relayContext(rest, outcome),
  acceptance_criteria: [pick(['The side-effect file has its line.', 'One line appended to the side file.'])] } });
}

/** review_result's arguments accepting taskId's result, worded afresh (with or without feedback). */
export const acceptArgs = (taskId) => reorder({ task_id: taskId, verdict: 'accept',
  ...pick([{}, { feedback: pick(['Looks right; accepted.', 'The line is there, thanks.']) }]) });
