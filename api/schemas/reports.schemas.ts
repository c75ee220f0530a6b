import { z } from './zod.js';
import { isoDateTime, usageFields } from './common.schemas.js';
import { DEFAULT_REPORT_SETTINGS, SETTING_BOUNDS } from '../../core/reports/report.settings.js';
import { REPORT_MAX_DAYS } from '../../core/reports/reports.service.js';

export const reportQuery = z.object({
  deviceId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: 'One device (404 DEVICE_NOT_FOUND for one the caller cannot see); or `groupId`.' }),
  groupId: z.string().min(1).max(64).optional().openapi({
    description:
      'Every device of the group (404 GROUP_NOT_FOUND for a group the caller cannot see; a group-restricted user: its own group only); or `deviceId`.',
  }),
  from: isoDateTime.openapi({ description: 'Trips and stops that end at or after this instant…' }),
  to: isoDateTime.openapi({
    description: `…and begin at or before this one; at most ${REPORT_MAX_DAYS} days after \`from\`.`,
  }),
});

const localTime = z.string().openapi({
  description: "ISO 8601 in the account's time zone, with its offset (`2026-06-01T08:00:00+02:00`).",
  example: '2026-06-01T08:00:00+02:00',
});

const tripSchema = z
  .object({
    deviceId: z.string(),
    startTime: localTime,
    endTime: localTime,
    startLatitude: z.number(),
    startLongitude: z.number(),
    endLatitude: z.number(),
    endLongitude: z.number(),
    distance: z
      .number()
      .openapi({ description: "km, counted by the distance rules over the trip's fixes (as `totalDistance`)" }),
    duration: z.number().int().openapi({ description: 's' }),
    maxSpeed: z.number().openapi({ description: 'km/h' }),
    averageSpeed: z.number().openapi({ description: 'km/h: distance over duration' }),
  })
  .openapi('Trip');

const stopSchema = z
  .object({
    deviceId: z.string(),
    startTime: localTime,
    endTime: localTime,
    latitude: z.number(),
    longitude: z.number(),
    duration: z.number().int().openapi({ description: 's' }),
  })
  .openapi('Stop');

const summarySchema = z
  .object({
    deviceId: z.string(),
    distance: z.number().openapi({ description: "km: the trips' distance" }),
    maxSpeed: z.number().openapi({ description: 'km/h' }),
    averageSpeed: z.number().openapi({ description: 'km/h: distance over driving time' }),
    drivingTime: z.number().int().openapi({ description: "s: the trips' duration" }),
    stoppedTime: z.number().int().openapi({ description: "s: the stops' duration" }),
    engineHours: z.number().optional().openapi({
      description: 'h with ignition on within [from, to]; absent when no fix of the device reported ignition',
    }),
  })
  .openapi('ReportSummary');

export const tripsResponse = z.object({ success: z.literal(true), trips: z.array(tripSchema), ...usageFields });
export const stopsResponse = z.object({ success: z.literal(true), stops: z.array(stopSchema), ...usageFields });
export const summaryResponse = z.object({
  success: z.literal(true),
  summary: z.array(summarySchema).openapi({ description: 'One per device, in id order.' }),
  ...usageFields,
});

const bounded = (name: keyof typeof SETTING_BOUNDS, description: string) =>
  z
    .number()
    .min(SETTING_BOUNDS[name][0])
    .max(SETTING_BOUNDS[name][1])
    .openapi({ description: `${description} (default ${DEFAULT_REPORT_SETTINGS[name]})` });

const settingsShape = {
  movingSpeedKmh: bounded('movingSpeedKmh', 'a fix at this speed (km/h) or faster is moving'),
  minStopSeconds: bounded(
    'minStopSeconds',
    'a halt, or a gap between fixes, at least this long (s) ends a trip and is a stop; a shorter halt (a traffic light) is part of the trip',
  ),
  minTripKm: bounded(
    'minTripKm',
    "a trip shorter than this (km) is part of the stop around it (a parked tracker's jitter)",
  ),
  minTripSeconds: bounded('minTripSeconds', 'a trip shorter than this (s) is part of the stop around it'),
  useIgnition: z.boolean().openapi({
    description:
      'where a fix reports ignition (`attributes.ignition`, else `inputs[0]`), ignition off is stopped whatever the speed (default true)',
  }),
};

export const reportSettingsSchema = z.object(settingsShape).openapi('ReportSettings');
export const reportSettingsChange = z.object(settingsShape).partial().strict().openapi('ReportSettingsChange');
export const reportSettingsResponse = z.object({
  success: z.literal(true),
  settings: reportSettingsSchema,
  ...usageFields,
});
