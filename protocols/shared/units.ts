/** Unit conversions at the decoder boundary. */
export const KMH_PER_KNOT = 1.852;
export const KMH_PER_MPS = 3.6;

export const knotsToKmh = (knots: number): number => knots * KMH_PER_KNOT;
export const mpsToKmh = (mps: number): number => mps * KMH_PER_MPS;
/** centimetres per second (Castel) to km/h */
export const cmsToKmh = (cms: number): number => cms * 0.036;
