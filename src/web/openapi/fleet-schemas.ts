// OpenAPI schemas of GET /fleet.json (api/fleet-api.ts) and the GET /fleet page (pages/fleet-page.ts): the fleet's hosts as this host's rq-mgr sees them in etcd.
import type { FastifySchema } from 'fastify';
import { FAIL, TAGS, answer } from './shapes.js';

const FIGURES = {
  type: 'object',
  properties: {
    status: { type: 'string', description: 'UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL; DOWN while the queue process does not answer' },
    ready: { type: 'integer', description: 'Messages due now, waiting for a worker' },
    running: { type: 'integer' },
    workers: { type: 'integer', description: 'Worker slots (num_workers)' },
  },
};

const HOST = {
  type: 'object',
  required: ['host', 'state', 'url', 'since', 'queues'],
  properties: {
    host: { type: 'string', example: 'rq-a' },
    state: { type: 'string', enum: ['up', 'gone'], description: 'up while its lease-bound key is in etcd; gone once it left or its lease expired' },
    url: { type: 'string', description: 'The base URL other hosts reach its web at (fleet.advertise)', example: 'http://10.0.0.5:3333' },
    since: { type: 'string', nullable: true, description: 'up: when it joined; gone: when it left (null when no host saw it go)' },
    version: { type: 'string' },
    started_at: { type: 'string' },
    queues: { type: 'object', additionalProperties: FIGURES },
  },
};

const FLEET = {
  type: 'object',
  required: ['fleet', 'host', 'member', 'etcd', 'hosts'],
  properties: {
    fleet: { type: 'string', example: 'prod' },
    host: { type: 'string', description: "This host's name in the fleet" },
    member: {
      type: 'object',
      properties: {
        state: { type: 'string', enum: ['joining', 'member', 'unreachable', 'refused', 'left'] },
        since: { type: 'string' },
        reason: { type: 'string', description: 'unreachable: what etcd answered; refused: which host holds the name' },
      },
    },
    etcd: {
      type: 'object',
      properties: {
        endpoints: { type: 'array', items: { type: 'string' } },
        reachable: { type: 'boolean', description: 'false while etcd does not answer: the hosts are as last seen' },
      },
    },
    hosts: { type: 'array', items: HOST },
  },
};

export const fleetSchemas = {
  fleetJson: {
    summary: 'The fleet this host is in: every host, up or gone, with its queues (`rq fleet`)',
    description: '`Cache-Control: no-store`. docs/fleet.md says what a fleet is.',
    tags: [TAGS.status],
    response: {
      200: answer('The fleet', { json: FLEET }),
      404: answer('No fleet is configured on this host (`["fail","no fleet is configured on this host …"]`)', { json: FAIL }),
      503: answer('rq-mgr did not answer', { json: FAIL }),
    },
  },
  fleetPage: {
    summary: 'The fleet page: every host, up or gone and since when, its URL and its queues; the page polls itself every 2 s',
    description: '`Cache-Control: no-store`. Linked from the header only on a host in a fleet.',
    tags: [TAGS.pages],
    response: {
      200: answer('The page', { html: true }),
      404: answer('No fleet is configured on this host (a Not Found page saying so)', { html: true }),
      503: answer('rq-mgr did not answer', { html: true }),
    },
  },
} satisfies Record<string, FastifySchema>;
