import type { Alarm } from '../../core/model/alarm.js';

/** HTTP statuses the decoder answers with (Traccar `OsmAndProtocolDecoder`) */
export const STATUS_OK = 200;
export const STATUS_BAD_REQUEST = 400;

/** a request body larger than this is not a position report */
export const MAX_BODY_BYTES = 64 * 1024;
/** attributes kept from one request's free-form keys */
export const MAX_ATTRIBUTES = 200;

/** `LC` logging codes of French OsmAnd-speaking trackers (Traccar `translateLoggingCode`) */
export const LOGGING_CODES: Readonly<Record<number, string>> = {
  0x01: 'Réinitialisation quotidienne',
  0x08: "Redémarrage après échec d'accusé de réception",
  0x09: 'Redémarrage après adresse IP invalide',
  0x10: 'Cyclique',
  0x11: 'Keep alive',
  0x12: 'Manuel (LOCSTK)',
  0x13: 'Distant (SENDPOSI)',
  0x51: 'Capture UART',
  0x58: 'Précharge en cours',
  0x59: 'Charge rapide en cours',
  0x5a: 'Charge terminée',
  0x5b: 'Charge suspendue',
  0x5c: 'Défaut batterie',
  0x5d: 'Batterie faible',
  0x5e: 'Alimentation externe coupée',
  0x5f: 'Alimentation externe branchée',
  0x60: 'iButton One-Wire retiré',
  0x61: 'iButton One-Wire détecté',
  0x80: 'Mouvement arrêté',
  0x84: 'Mouvement démarré',
  0x8a: 'Choc détecté',
  0x90: 'Changement de cap',
  0x91: 'Dépassement du seuil de vitesse basse',
  0x92: 'Distance minimale atteinte',
  0xe0: 'Éco-conduite : évaluation impossible',
  0xe1: 'Éco-conduite : évaluation possible',
  0xe2: 'Éco-conduite : freinage excessif',
  0xe3: 'Éco-conduite : accélération excessive',
  0xe4: 'Éco-conduite : virage excessif',
  0xff: 'Inconnu',
};

/** ranges of `LC` codes, with the description prefix and the first code of the range */
export const LOGGING_CODE_RANGES: ReadonlyArray<readonly [number, number, string, number]> = [
  [0x21, 0x28, 'Entrée GPIO ', 1],
  [0x2a, 0x2d, 'Entrée analogique ', 1],
  [0xa0, 0xbd, 'Sortie de la zone géographique ', 0],
  [0xc0, 0xdd, 'Entrée dans la zone géographique ', 0],
];

/** `LC` codes that are alarms */
export const LOGGING_CODE_ALARMS: Readonly<Record<number, Alarm>> = {
  0x5c: 'fault',
  0x5d: 'lowBattery',
  0x5e: 'powerCut',
  0x5f: 'powerRestored',
};
