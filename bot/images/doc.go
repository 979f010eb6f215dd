// Package images is the product-image pipeline of the Telegram adapter
// (package bot): a catalog image downloaded with the upstream client's
// guards within a timeout, checked to be a photo Telegram takes
// , uploaded once and shown by its file_id from then on (the
// cache in work.Images, shared by every replica), remembered as broken for
// a while when it cannot be had, and Telegram's refusals of a photo told
// apart (IsPhotoRefused, IsWrongFileID). It does not speak go-telegram: the
// adapter sends the Photo it resolves.
package images
