import { type NodeStatus, planUp, rejoinable, type UpPlan } from '../../../scripts/cluster/galera';

// `npm run cluster -- up` with a cluster it started before: what it does follows from which of
// the nodes run. "Already up" only when every node does; a node that stopped (or was killed) is
// started again to rejoin those that run; with none running there is nothing to join. The
// decision alone, without Galera (which it does not need).
test.each<[string, boolean[], UpPlan]>([
  ['every node runs: nothing to do', [true, true, true], { action: 'none' }],
  ['one node stopped: it rejoins the others', [true, false, true], { action: 'rejoin', down: [1], up: [0, 2] }],
  ['the first node stopped: it rejoins the others', [false, true, true], { action: 'rejoin', down: [0], up: [1, 2] }],
  ['two nodes stopped: both rejoin the third', [false, true, false], { action: 'rejoin', down: [0, 2], up: [1] }],
  ['no node runs: a new cluster', [false, false, false], { action: 'new' }],
  ['a cluster of one that runs', [true], { action: 'none' }],
  ['a cluster of one that does not', [false], { action: 'new' }],
])('%s', (_, running, plan) => {
  expect(planUp(running)).toEqual(plan);
});

// Before the stopped nodes are started: can the running ones take them back? A node that does
// not answer is not reported as a lost majority.
const status = (clusterStatus: string): NodeStatus => ({ state: 'Synced', ready: true, clusterSize: 3, clusterStatus });
test.each<[string, { node: number; status: NodeStatus | Error }[], ReturnType<typeof rejoinable>]>([
  ['a running node in the primary component', [{ node: 0, status: status('Primary') }], { ok: true }],
  [
    'one node hung, the other in the primary component',
    [
      { node: 0, status: new Error('connect ETIMEDOUT') },
      { node: 2, status: status('Primary') },
    ],
    { ok: true },
  ],
  [
    'no running node answers',
    [
      { node: 0, status: new Error('connect ETIMEDOUT') },
      { node: 2, status: new Error('connect ECONNREFUSED') },
    ],
    { ok: false, reason: 'no answer', detail: 'node0: connect ETIMEDOUT; node2: connect ECONNREFUSED' },
  ],
  [
    'those that answer are without a primary component',
    [
      { node: 0, status: new Error('connect ETIMEDOUT') },
      { node: 1, status: status('non-Primary') },
    ],
    { ok: false, reason: 'no primary', detail: 'node1: non-Primary' },
  ],
])('%s', (_, answers, verdict) => {
  expect(rejoinable(answers)).toEqual(verdict);
});
