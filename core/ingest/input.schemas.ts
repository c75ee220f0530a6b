/**
 * What a client may send as a location or an alert (CONTRACT.md §2), whatever carries it: the
 * REST bodies (api/ adds the OpenAPI names) and MQTT payloads validate with these same schemas.
 * Unknown fields are dropped.
 */
import { z } from 'zod';

/** Any ISO 8601 date-time with a zone (`Z` or `±hh:mm`), e.g. 2026-03-01T10:00:00Z. */
export const isoDateTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i, 'must be an ISO 8601 date-time with a zone, e.g. 2026-03-01T10:00:00Z')
  .refine((s) => !Number.isNaN(new Date(s).getTime()), 'is not a real date')
  .describe('ISO 8601 date-time with a zone, e.g. 2026-03-01T10:00:00Z');

const num = () => z.number().finite().nullable().optional();
const strings = () => z.array(z.string().max(500)).max(100).optional();

export const locationInput = z.object({
  dateTime: isoDateTime.describe('Fix time.'),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  speed: z.number().min(0).max(2000).nullable().optional().describe('km/h'),
  course: z.number().min(0).max(360).nullable().optional().describe('degrees'),
  battery: z.number().min(0).max(100).nullable().optional().describe('%'),
  fuel: num(), fuel2: num(), temperature: num(), temperature2: num(),
  sensorTime1: num(), sensorTime2: num(), sensorTime3: num(), sensorTime4: num(),
  inactiveSeconds: num(), rpm: num(),
  milleage: num().describe('km (the platform spells it so).'),
  warningTexts: strings(), alertTexts: strings(), alerts: strings(), warnings: strings(),
  hasCriticalAlert: z.boolean().nullable().optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
  accessoriesAttributes: z.array(z.record(z.string(), z.unknown())).max(100).optional(),
  inputs: z.array(z.boolean()).max(64).optional(),
  outputs: z.array(z.boolean()).max(64).optional(),
  altitude: num().describe('ext: metres'),
  accuracy: num().describe('ext: metres'),
  satellites: z.number().int().min(0).max(255).nullable().optional(),
  valid: z.boolean().nullable().optional(),
});

export const alertInput = z.object({
  dateTime: isoDateTime.optional().describe('When it happened (default: now).'),
  latitude: z.number().min(-90).max(90).nullable().optional(),
  longitude: z.number().min(-180).max(180).nullable().optional(),
  text: z.string().max(1000).nullable().optional(),
  alertName: z.string().trim().min(1).max(64).describe('One of the platform names: SOSButton, SpeedLimit, LowBattery, GPSUnplugged, Vibration, ForbiddenArea, HarshBraking, …'),
  alerts: z.array(z.string().max(64)).max(20).optional(),
});

/** As many locations per request or message as a client may send at once. */
export const MAX_LOCATIONS_PER_REQUEST = 5000;
