import type { ProtocolModule } from './types.js';
import { withRoundedPositions } from './shared/precision.js';
import { jt808Protocol } from './jt808/jt808.protocol.js';
import { osmandProtocol } from './osmand/osmand.protocol.js';
import { teltonikaProtocol } from './teltonika/teltonika.protocol.js';
import { gps103Protocol } from './gps103/gps103.protocol.js';
import { h02Protocol } from './h02/h02.protocol.js';
import { gt06Protocol } from './gt06/gt06.protocol.js';
import { meitrackProtocol } from './meitrack/meitrack.protocol.js';
import { tk103Protocol } from './tk103/tk103.protocol.js';
import { gl200Protocol } from './gl200/gl200.protocol.js';
import { watchProtocol } from './watch/watch.protocol.js';
import { suntechProtocol } from './suntech/suntech.protocol.js';
import { ruptelaProtocol } from './ruptela/ruptela.protocol.js';
import { galileoProtocol } from './galileo/galileo.protocol.js';
import { atrackProtocol } from './atrack/atrack.protocol.js';
import { wialonProtocol } from './wialon/wialon.protocol.js';
import { laipacProtocol } from './laipac/laipac.protocol.js';
import { startekProtocol } from './startek/startek.protocol.js';
import { t55Protocol } from './t55/t55.protocol.js';
import { navisProtocol } from './navis/navis.protocol.js';
import { castelProtocol } from './castel/castel.protocol.js';
import { trvProtocol } from './trv/trv.protocol.js';
import { tlt2hProtocol } from './tlt2h/tlt2h.protocol.js';
import { meiligaoProtocol } from './meiligao/meiligao.protocol.js';
import { eelinkProtocol } from './eelink/eelink.protocol.js';
import { xexunProtocol } from './xexun/xexun.protocol.js';
import { totemProtocol } from './totem/totem.protocol.js';
import { minifinder2Protocol } from './minifinder2/minifinder2.protocol.js';
import { flespiProtocol } from './flespi/flespi.protocol.js';

/**
 * Every protocol trackgate speaks, by name, its decoded positions rounded as they leave protocols/
 * (shared/precision.ts). Adding a protocol is one folder and one line here.
 */
export const protocols: Record<string, ProtocolModule> = rounding({
  jt808: jt808Protocol,
  osmand: osmandProtocol,
  teltonika: teltonikaProtocol,
  gps103: gps103Protocol,
  h02: h02Protocol,
  gt06: gt06Protocol,
  meitrack: meitrackProtocol,
  tk103: tk103Protocol,
  gl200: gl200Protocol,
  watch: watchProtocol,
  suntech: suntechProtocol,
  ruptela: ruptelaProtocol,
  galileo: galileoProtocol,
  atrack: atrackProtocol,
  wialon: wialonProtocol,
  laipac: laipacProtocol,
  startek: startekProtocol,
  t55: t55Protocol,
  navis: navisProtocol,
  castel: castelProtocol,
  trv: trvProtocol,
  tlt2h: tlt2hProtocol,
  meiligao: meiligaoProtocol,
  eelink: eelinkProtocol,
  xexun: xexunProtocol,
  totem: totemProtocol,
  minifinder2: minifinder2Protocol,
  flespi: flespiProtocol,
});

function rounding(modules: Record<string, ProtocolModule>): Record<string, ProtocolModule> {
  return Object.fromEntries(Object.entries(modules).map(([name, p]) => [name, withRoundedPositions(p)]));
}

export function getProtocol(name: string): ProtocolModule | undefined {
  return Object.hasOwn(protocols, name) ? protocols[name] : undefined;
}
